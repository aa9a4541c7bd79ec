//! The engine's command line, for any set of linked plugins: an image's binary names its
//! plugin crates and calls [`run`] (`examples/engine/src/main.rs` is the example image;
//! the scaffold writes one per image). It links no plugin of its own.
//!
//! Every command starts the engine first, and the engine refuses to start on any problem
//! with the linked plugins (exit status 1, every problem on stderr).

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

mod args;
mod call;
mod dev_token;
mod files;
mod knowledge;
mod listing;
mod logging;
mod panel_secrets;
mod plugins;
mod reload;
mod requirements;
mod serving;
mod turns;

use clap::{CommandFactory, FromArgMatches};
use engine_core::config::EngineConfig;
use engine_core::{Backends, Engine, EngineError};
use engine_mcp::McpServer;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

use args::{Cli, Command, ConfigCommand, ImageCommand};
use serving::External;

/// What an image is called: its name and version (`--version`, and the server's name to
/// MCP clients) and the sentence `--help` starts with. [`image!`](crate::image) fills
/// the first two from the image crate's Cargo.toml.
#[derive(Clone, Copy, Debug)]
pub struct Image {
    /// The image's name (its package's).
    pub name: &'static str,
    /// Its version.
    pub version: &'static str,
    /// What it is, in one sentence.
    pub about: &'static str,
}

/// The [`Image`] of the crate that calls it, described by `about`:
/// `engine_cli::image!("Acme's support engine")`.
#[macro_export]
macro_rules! image {
    ($about:expr) => {
        $crate::Image {
            name: ::core::env!("CARGO_PKG_NAME"),
            version: ::core::env!("CARGO_PKG_VERSION"),
            about: $about,
        }
    };
}

/// Parses the command line, starts the engine on what the binary linked, with `backends`
/// to open its configured parts (`engine::default_backends()`: the backends the image's
/// features chose), and runs the command.
///
/// # Safety
///
/// Call it first thing in `main`, before the binary starts any thread: it sets the
/// linked plugins' variable defaults (`plugin! { system }`) the environment does not set,
/// and removes the `ENGINE_SECRET__*` variables from the process environment, which is
/// sound only while
/// no other thread reads or writes the environment (see
/// [`take_environment`](engine_core::config::take_environment)).
pub unsafe fn run(image: Image, backends: Backends) -> ExitCode {
    let matches = Cli::command()
        .name(image.name)
        .version(image.version)
        .about(image.about)
        .get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(error) => error.format(&mut Cli::command()).exit(),
    };
    match &cli.command {
        Command::Image {
            command: ImageCommand::Requirements { format },
        } => return requirements::print(*format),
        Command::Plugins { format, locale } => return plugins::print(*format, locale),
        _ => {}
    }
    // SAFETY: our caller promises that this is the only thread.
    unsafe { requirements::apply_variable_defaults() };
    // SAFETY: our caller promises that this is the only thread.
    let environment = unsafe { engine_core::config::take_environment() };
    // SAFETY: as above.
    let token = match unsafe { serving::take_token() } {
        Ok(token) => token,
        Err(error) => {
            eprintln!("the engine refused to start: {error}");
            return ExitCode::FAILURE;
        }
    };
    let file = match &cli.command {
        Command::Config {
            command: ConfigCommand::Check { file: Some(file) },
        } => Some(file.as_path()),
        _ => cli.config.as_deref(),
    };
    // A configuration error quotes no secret (engine-core redacts it), so it may print.
    // Its values are checked with what is linked, every problem at once, by the builder.
    let checking = matches!(cli.command, Command::Config { .. });
    let refused = if checking {
        "the engine would refuse to start"
    } else {
        "the engine refused to start"
    };
    // Kept to read the file again on SIGHUP, the same way. A check and `dev-token` open
    // no database: the panel's secrets there are read by an engine that runs.
    let offline = checking || matches!(cli.command, Command::DevToken { .. });
    let reload_from = file.map(|file| {
        reload::ConfigSource::new(
            file.to_owned(),
            environment.variables.clone(),
            backends.panel_secrets,
            offline,
        )
    });
    let read = match &reload_from {
        Some(source) => source.read(),
        None => EngineConfig::read(None, environment.variables).map_err(|error| error.to_string()),
    };
    let config = match read {
        Ok(config) => config,
        Err(error) => {
            eprintln!("{refused}: {error}");
            return ExitCode::FAILURE;
        }
    };
    if let Command::DevToken { command } = cli.command {
        return dev_token::run(&config, &cli.agent, command);
    }
    if checking {
        let what = match file {
            Some(_) => "the configuration",
            None => "the default configuration (no file given)",
        };
        let provider_files = engine_extensions::read_providers(&config);
        return match Engine::builder()
            .provider_files(provider_files)
            .config(config)
            .backends(backends)
            .check()
        {
            Ok(()) => {
                println!("ok: {what} has no problem with what this engine links");
                ExitCode::SUCCESS
            }
            // The plugins' report says that the engine refused, and ends its own lines.
            Err(EngineError::Startup(report)) => {
                eprint!("{report}");
                ExitCode::FAILURE
            }
            Err(error) => {
                eprintln!("the engine would refuse to start: {error}");
                ExitCode::FAILURE
            }
        };
    }
    // Logs go to stderr (stdout carries command output, and the MCP protocol on stdio),
    // with every configured secret and the MCP token redacted from every line; so do panic
    // messages, before any plugin code runs.
    let redact = engine_core::LogRedaction::new(engine_core::redactor_with(&config, token.clone()));
    engine_core::install_redacting_panic_hook(redact.clone());
    let (levels, ignored) = logging::log_levels(std::env::var("RUST_LOG").ok());
    tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(engine_core::RedactingWriter::new(
                    redact.clone(),
                    std::io::stderr,
                ))
                .with_ansi(std::io::stderr().is_terminal()),
        )
        .with(levels)
        .init();
    if let Some(error) = ignored {
        tracing::warn!("RUST_LOG ignored ({error}); logging INFO and up, rmcp's from WARN");
    }
    for name in environment.skipped {
        tracing::warn!(
            variable = %name,
            "skipped an environment variable whose name or value is not UTF-8"
        );
    }
    // Every image has reqwest on rustls without a crypto provider of its own, whatever
    // backends it chose (the external tools' MCP client is built on it): ring is
    // installed before any plugin code runs, so that a plugin's own reqwest client works
    // in an image without the `http` backend too.
    engine_providers::install_tls_provider();
    let loader = engine_extensions::Loader::new(&config);
    let max_document_bytes = config.knowledge.max_document_bytes;
    // Where `engine dev-token` keeps the tokens dev sessions open with.
    let dev_tokens = engine_server::DevTokens::in_dir(&config.data_dir());
    let mut builder = Engine::builder()
        .provider_files(engine_extensions::read_providers(&config))
        .config(config)
        .log_redaction(redact)
        .backends(backends);
    // A call in a conversation keeps its state where turns keep theirs, turns or not.
    if matches!(
        &cli.command,
        Command::Call {
            conversation: Some(_),
            ..
        }
    ) {
        builder = builder.keep_conversations();
    }
    let engine = Arc::new(builder.build_or_exit());
    let extensions = loader.map(|loader| External::load(&engine, loader));
    let turn = match engine.turn(&cli.agent) {
        Ok(turn) => turn,
        Err(error) => return unknown_agent(error),
    };
    let agent = cli.agent;
    match cli.command {
        Command::Tools { locale } => {
            print!("{}", listing::list_tools(&engine, &locale));
            print!("{}", listing::list_hooks(&engine, &locale));
            print!("{}", listing::list_agents(&engine));
        }
        Command::Catalog { format, locale } => {
            let catalog = engine
                .agent(&agent)
                .expect("checked")
                .catalog(format, &locale);
            println!("{}", String::from_utf8_lossy(&catalog));
        }
        Command::Call {
            subscriber,
            conversation,
            tool,
            arguments,
            timeout_ms,
        } => {
            let turn = match (subscriber, conversation) {
                (Some(subscriber), Some(conversation)) => turn
                    .in_conversation(subscriber, conversation.clone())
                    .via(engine_core::CLI_CHANNEL, &conversation),
                _ => turn,
            };
            return call::call(
                &engine,
                &turn,
                &tool,
                &arguments,
                Duration::from_millis(timeout_ms),
            );
        }
        Command::Turn {
            message,
            resume: _,
            at,
        } => return turns::one_turn(&engine, at.place(turn), message),
        Command::Chat { full_arguments, at } => {
            return turns::chat(&engine, at.place(turn), full_arguments)
        }
        Command::Knowledge { command } => {
            return knowledge::run(&engine, &agent, command, max_document_bytes)
        }
        Command::Check => {
            print!("{}", listing::check_report(&engine));
            if listing::extension_problems(&engine) {
                return ExitCode::FAILURE;
            }
        }
        Command::Config { .. }
        | Command::Image { .. }
        | Command::DevToken { .. }
        | Command::Plugins { .. } => {
            unreachable!("answered before the engine starts")
        }
        Command::Mcp { options } => {
            let _watching = extensions.map(|external| external.watch(&engine));
            let reloading = reload_from.map(|from| (from, Arc::clone(&engine)));
            let server = match McpServer::new(engine, &agent, options.options(&image)) {
                Ok(server) => server,
                Err(error) => return unknown_agent(error),
            };
            return serving::serve(engine_mcp::serve_stdio(server), reloading);
        }
        Command::Serve {
            addr,
            options,
            http,
        } => {
            let _watching = extensions.map(|external| external.watch(&engine));
            let configuration = reload_from.clone().map(|source| {
                Arc::new(reload::PanelConfig {
                    source,
                    engine: Arc::clone(&engine),
                }) as Arc<dyn engine_server::Configuration>
            });
            let reloading = reload_from.map(|from| (from, Arc::clone(&engine)));
            let server = match McpServer::new(engine, &agent, options.options(&image)) {
                Ok(server) => server,
                Err(error) => return unknown_agent(error),
            };
            let options = engine_server::HttpOptions {
                dev_tokens: Some(dev_tokens),
                configuration,
                ..http.options(token)
            };
            return serving::serve(serving::serve_http(server, addr, options), reloading);
        }
    }
    ExitCode::SUCCESS
}

/// `--agent` names no agent of the configuration: a usage error (exit status 2).
fn unknown_agent(error: engine_core::UnknownAgent) -> ExitCode {
    eprintln!("{error}");
    ExitCode::from(2)
}
