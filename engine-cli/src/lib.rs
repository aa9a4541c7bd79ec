//! The engine's command line, for any set of linked plugins: an image's binary names its
//! plugin crates and calls [`run`] (`examples/engine/src/main.rs` is the example image;
//! the scaffold writes one per image). It links no plugin of its own.
//!
//! Every command starts the engine first, and the engine refuses to start on any problem
//! with the linked plugins (exit status 1, every problem on stderr).

use std::future::Future;
use std::io::IsTerminal;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

mod listing;
mod reload;
mod turns;

use std::path::PathBuf;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use engine_core::config::EngineConfig;
use engine_core::{
    Backends, Call, CallErrorKind, CancellationToken, Engine, EngineError, Format, Turn,
};
use engine_mcp::McpServer;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

#[derive(Parser)]
struct Cli {
    /// The engine's configuration (TOML): agents, their secrets and grants. Secrets may
    /// also come from ENGINE_SECRET__<agent>__<key> variables.
    #[arg(long, env = "ENGINE_CONFIG", global = true)]
    config: Option<PathBuf>,
    /// The agent whose tools a command uses.
    #[arg(long, default_value = engine_core::config::DEFAULT_AGENT, global = true)]
    agent: String,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the linked plugins and their tools, the hooks by event, and what each agent
    /// equips, with summaries for people.
    Tools {
        /// The reader's locale (BCP 47), for display names and summaries.
        #[arg(long, default_value = "en-US")]
        locale: String,
    },
    /// Print the agent's tool catalog as a provider or an MCP client receives it.
    Catalog {
        /// openai, anthropic, gemini or mcp.
        #[arg(long)]
        format: Format,
        /// The reader's locale, for MCP titles.
        #[arg(long, default_value = "en-US")]
        locale: String,
    },
    /// Call one of the agent's tools once with JSON arguments and print its output.
    /// Without `--conversation`, tools that need one are not offered; with it, the call
    /// uses and keeps that conversation's state (under `data_dir`).
    Call {
        /// The end user the call is for; with `--conversation`, the call runs in a turn.
        #[arg(long, requires = "conversation")]
        subscriber: Option<String>,
        /// The conversation the call belongs to.
        #[arg(long, requires = "subscriber")]
        conversation: Option<String>,
        /// The tool, by id (`weather:weather`) or wire name (`weather__weather`).
        tool: String,
        /// The arguments, as JSON text.
        arguments: String,
        /// Stop the tool after this many milliseconds (1 to 86400000, a day).
        #[arg(long, default_value_t = 30_000, value_parser = timeout_ms())]
        timeout_ms: u64,
    },
    /// Run one turn of the agent (it needs a `turn` configuration) and print its events
    /// as NDJSON, one per line.
    Turn {
        /// The user's message; absent with `--resume`.
        #[arg(required_unless_present = "resume")]
        message: Option<String>,
        /// Continue the conversation from its last completed step (after a crash).
        #[arg(long, conflicts_with = "message", requires = "conversation")]
        resume: bool,
        #[command(flatten)]
        at: ConversationArgs,
    },
    /// Talk with the agent in the terminal: the reply streams, each tool call shows as it
    /// starts and ends.
    Chat {
        #[command(flatten)]
        at: ConversationArgs,
    },
    /// Run the start-up validation and report what it found; exit 1 on any problem.
    Check,
    /// Check the configuration.
    Config {
        #[command(subcommand)]
        command: ConfigCommand,
    },
    /// What this image is made of.
    Image {
        #[command(subcommand)]
        command: ImageCommand,
    },
    /// Serve the agent's tools over MCP on stdin and stdout (Claude Desktop, Cursor, ...).
    Mcp {
        #[command(flatten)]
        options: McpArgs,
    },
    /// Serve the agent's tools over MCP's streamable HTTP at `http://ADDR/mcp`. With
    /// ENGINE_MCP_TOKEN set (32 bytes or more, no whitespace or control characters:
    /// `openssl rand -hex 32`), every request needs `Authorization: Bearer <token>`; an
    /// address other hosts can reach, or an allowed host or origin that is not loopback,
    /// needs it.
    Serve {
        /// The address to listen on; port 0 picks a free one. The URL is printed.
        #[arg(long, default_value = "127.0.0.1:8080")]
        addr: SocketAddr,
        #[command(flatten)]
        options: McpArgs,
        #[command(flatten)]
        http: HttpArgs,
    },
}

#[derive(Subcommand)]
enum ImageCommand {
    /// The Debian packages and environment variables the linked plugins need
    /// (`plugin! { system }`): their union, each variable with its default and whether
    /// the environment sets it (a value it sets wins). Exit 1, naming both plugins and
    /// both values, when two plugins declare one variable with different defaults.
    Requirements {
        #[arg(long, value_enum, default_value_t = RequirementsFormat::Json)]
        format: RequirementsFormat,
    },
}

/// How `image requirements` prints them.
#[derive(Clone, Copy, clap::ValueEnum)]
enum RequirementsFormat {
    /// Each package with the plugins that need it; each variable with its default, its
    /// plugins, and whether the environment sets it.
    Json,
    /// Lines for an image's runtime stage: `RUN apt-get install`, `ENV`.
    Dockerfile,
    /// The package names on one line, for `apt-get install`.
    Packages,
}

#[derive(Subcommand)]
enum ConfigCommand {
    /// Report every problem start-up would refuse in the configuration, alone and with
    /// what this binary links, without starting anything; exit 1 on any.
    Check {
        /// The configuration to check, instead of `--config`.
        file: Option<PathBuf>,
    },
}

/// A call's timeout in milliseconds: at least 1, at most a day, so that the deadline
/// (now plus the timeout) cannot overflow the clock and panic.
fn timeout_ms() -> clap::builder::RangedU64ValueParser {
    clap::value_parser!(u64).range(1..=24 * 60 * 60 * 1000)
}

/// Who may reach the HTTP server, and how much it serves at once.
#[derive(clap::Args)]
struct HttpArgs {
    /// A browser origin allowed besides loopback ones, such as `https://app.example.com:443`
    /// (`:*` for any port); repeat for more. Requests from other origins get 403.
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    allowed_origins: Vec<String>,
    /// A host name clients reach the server by, besides loopback ones (needed for an
    /// address other hosts reach); repeat for more. Requests for other hosts get 403.
    #[arg(long = "allow-host", value_name = "HOST")]
    allowed_hosts: Vec<String>,
    /// The most requests served at once; more get 503 at once.
    #[arg(
        long,
        default_value_t = engine_mcp::HttpOptions::default().max_in_flight,
        value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..),
    )]
    max_in_flight: usize,
    /// The most connections open at once; more are answered 503 and closed.
    #[arg(
        long,
        default_value_t = engine_mcp::HttpOptions::default().max_connections,
        value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..),
    )]
    max_connections: usize,
    /// Milliseconds a client has to send a request's head (on a new or an idle keep-alive
    /// connection) before the connection is closed.
    #[arg(
        long,
        default_value_t = millis(engine_mcp::HttpOptions::default().header_read_timeout),
        value_parser = timeout_ms(),
    )]
    header_read_timeout_ms: u64,
    /// Milliseconds a client has to send a request's body before it is answered 408.
    #[arg(
        long,
        default_value_t = millis(engine_mcp::HttpOptions::default().body_read_timeout),
        value_parser = timeout_ms(),
    )]
    body_read_timeout_ms: u64,
}

fn millis(duration: Duration) -> u64 {
    duration.as_millis().try_into().unwrap_or(u64::MAX)
}

impl HttpArgs {
    fn options(self, token: Option<String>) -> engine_mcp::HttpOptions {
        engine_mcp::HttpOptions {
            token,
            allowed_origins: self.allowed_origins,
            allowed_hosts: self.allowed_hosts,
            max_in_flight: self.max_in_flight,
            max_connections: self.max_connections,
            header_read_timeout: Duration::from_millis(self.header_read_timeout_ms),
            body_read_timeout: Duration::from_millis(self.body_read_timeout_ms),
        }
    }
}

/// Which conversation a turn is in, and for whom.
#[derive(clap::Args)]
struct ConversationArgs {
    /// The conversation (stored under the data directory); absent: a new one each time.
    #[arg(long)]
    conversation: Option<String>,
    /// The end user the conversation is for.
    #[arg(long, default_value = "cli")]
    subscriber: String,
    /// The reader's locale (BCP 47).
    #[arg(long)]
    locale: Option<String>,
}

impl ConversationArgs {
    fn place(self, turn: Turn) -> Turn {
        let conversation = self
            .conversation
            .unwrap_or_else(|| format!("cli-{}", std::process::id()));
        let turn = turn.in_conversation(self.subscriber, conversation);
        match self.locale {
            Some(locale) => turn.with_locale(locale),
            None => turn,
        }
    }
}

/// What both MCP transports take.
#[derive(clap::Args)]
struct McpArgs {
    /// The locale of tool titles when the client names none (in `_meta.locale`, or over
    /// HTTP in `Accept-Language`).
    #[arg(long, default_value = "en-US")]
    locale: String,
    /// Stop a tool call after this many milliseconds (1 to 86400000, a day).
    #[arg(long, default_value_t = 30_000, value_parser = timeout_ms())]
    timeout_ms: u64,
}

impl McpArgs {
    fn options(self, image: &Image) -> engine_mcp::Options {
        engine_mcp::Options {
            locale: self.locale,
            timeout: Duration::from_millis(self.timeout_ms),
            server_name: image.name.to_owned(),
            server_version: image.version.to_owned(),
        }
    }
}

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

/// Every backend this engine opens its configured parts with: conversations and knowledge
/// on SQLite under the data directory, every store on PostgreSQL with `[database]`,
/// providers and the tools' model gateway over HTTP. The one list of them.
pub fn default_backends() -> Backends {
    let backends = engine_sqlite::backends(Backends::NONE);
    let backends = engine_postgres::backends(backends);
    engine_providers::backends(backends)
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

/// Parses the command line, starts the engine on what the binary linked, and runs the
/// command.
///
/// # Safety
///
/// Call it first thing in `main`, before the binary starts any thread: it sets the
/// linked plugins' variable defaults (`plugin! { system }`) the environment does not set,
/// and removes the `ENGINE_SECRET__*` variables from the process environment, which is
/// sound only while
/// no other thread reads or writes the environment (see
/// [`take_environment`](engine_core::config::take_environment)).
pub unsafe fn run(image: Image) -> ExitCode {
    let matches = Cli::command()
        .name(image.name)
        .version(image.version)
        .about(image.about)
        .get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(error) => error.format(&mut Cli::command()).exit(),
    };
    if let Command::Image {
        command: ImageCommand::Requirements { format },
    } = &cli.command
    {
        return print_requirements(*format);
    }
    // SAFETY: our caller promises that this is the only thread.
    unsafe { apply_variable_defaults() };
    // SAFETY: our caller promises that this is the only thread.
    let environment = unsafe { engine_core::config::take_environment() };
    // SAFETY: as above.
    let token = match unsafe { take_token() } {
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
    // Kept to read the file again on SIGHUP, the same way.
    let reload_from = file.map(|file| reload::ConfigSource {
        file: file.to_owned(),
        variables: environment.variables.clone(),
    });
    let config = match EngineConfig::read(file, environment.variables) {
        Ok(config) => config,
        Err(error) => {
            eprintln!("{refused}: {error}");
            return ExitCode::FAILURE;
        }
    };
    if checking {
        let what = match file {
            Some(_) => "the configuration",
            None => "the default configuration (no file given)",
        };
        return match Engine::builder().config(config).check() {
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
    let (levels, ignored) = log_levels(std::env::var("RUST_LOG").ok());
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
    let loader = engine_extensions::Loader::new(&config);
    let mut builder = Engine::builder()
        .config(config)
        .log_redaction(redact)
        .backends(default_backends());
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
        Err(error) => {
            eprintln!("{error}");
            return ExitCode::from(2);
        }
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
                (Some(subscriber), Some(conversation)) => {
                    turn.in_conversation(subscriber, conversation)
                }
                _ => turn,
            };
            return call(
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
        Command::Chat { at } => return turns::chat(&engine, at.place(turn)),
        Command::Check => {
            print!("{}", listing::check_report(&engine));
            if listing::extension_problems(&engine) {
                return ExitCode::FAILURE;
            }
        }
        Command::Config { .. } | Command::Image { .. } => {
            unreachable!("answered before the engine starts")
        }
        Command::Mcp { options } => {
            let _watching = extensions.map(|external| external.watch(&engine));
            let reloading = reload_from.map(|from| (from, Arc::clone(&engine)));
            let server = McpServer::new(engine, agent, options.options(&image));
            return serve(engine_mcp::serve_stdio(server), reloading);
        }
        Command::Serve {
            addr,
            options,
            http,
        } => {
            let _watching = extensions.map(|external| external.watch(&engine));
            let reloading = reload_from.map(|from| (from, Arc::clone(&engine)));
            let server = McpServer::new(engine, agent, options.options(&image));
            return serve(serve_http(server, addr, http.options(token)), reloading);
        }
    }
    ExitCode::SUCCESS
}

/// External tools, read once at start-up for every command. Their connections (MCP
/// servers) and the watch of their directory run on a runtime of their own, with one
/// worker: it outlives each command's runtime, and a busy server never takes a worker
/// from serving.
struct External {
    runtime: tokio::runtime::Runtime,
    loader: engine_extensions::Loader,
}

impl External {
    fn load(engine: &Engine, loader: engine_extensions::Loader) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("extensions")
            .enable_all()
            .build()
            .expect("a runtime starts");
        engine.install_extensions(runtime.block_on(loader.load(engine)));
        Self { runtime, loader }
    }

    /// Watches the directory while the engine serves (the runtime stays with the
    /// watch); a watch that cannot start is logged, and the tools read at start-up stay.
    fn watch(
        self,
        engine: &Arc<Engine>,
    ) -> (Option<engine_extensions::Watching>, tokio::runtime::Runtime) {
        let watching = {
            let _entered = self.runtime.enter();
            engine_extensions::watch(Arc::clone(engine), self.loader)
                .inspect_err(|error| tracing::error!("external tools will not reload: {error}"))
                .ok()
        };
        (watching, self.runtime)
    }
}

/// Runs `server`, and beside it the engine's reload on SIGHUP from the configuration
/// file it was read from, when it was read from one.
fn serve<E: std::fmt::Display>(
    server: impl Future<Output = Result<(), E>>,
    reloading: Option<(reload::ConfigSource, Arc<Engine>)>,
) -> ExitCode {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime starts");
    if let Some((source, engine)) = reloading {
        let _entered = runtime.enter();
        if let Some(reloading) = source.reload_on_hangup(engine) {
            runtime.spawn(reloading);
        }
    }
    match runtime.block_on(server) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("the MCP server stopped: {error}");
            ExitCode::FAILURE
        }
    }
}

/// `engine image requirements`.
fn print_requirements(format: RequirementsFormat) -> ExitCode {
    let requirements = match engine_core::SystemRequirements::linked() {
        Ok(requirements) => requirements,
        Err(conflicts) => {
            for conflict in conflicts {
                eprintln!("no image can carry these plugins: {conflict}");
            }
            return ExitCode::FAILURE;
        }
    };
    match format {
        RequirementsFormat::Dockerfile => print!("{}", requirements.dockerfile()),
        RequirementsFormat::Packages => {
            let packages: Vec<&str> = requirements.debian.keys().map(String::as_str).collect();
            println!("{}", packages.join(" "));
        }
        RequirementsFormat::Json => {
            // Whether the environment sets a variable, never its value (it may be secret).
            let env: serde_json::Map<String, serde_json::Value> = requirements
                .env
                .iter()
                .map(|(name, variable)| {
                    let described = serde_json::json!({
                        "default": variable.default,
                        "plugins": variable.plugins,
                        "set_in_environment": std::env::var_os(name).is_some(),
                    });
                    (name.clone(), described)
                })
                .collect();
            let report = serde_json::json!({ "debian": requirements.debian, "env": env });
            println!("{report:#}");
        }
    }
    ExitCode::SUCCESS
}

/// Sets each variable the linked plugins declare (`plugin! { system }`) to its default,
/// unless the environment sets it (even to the empty string): the image then runs as its
/// Dockerfile's `ENV` lines describe, with or without them. When two plugins disagree on
/// one, no default is set: start-up refuses those plugins.
///
/// # Safety
///
/// As [`take_environment`](engine_core::config::take_environment): no other thread may
/// exist yet.
unsafe fn apply_variable_defaults() {
    let Ok(requirements) = engine_core::SystemRequirements::linked() else {
        return;
    };
    for (name, value) in requirements.defaults_to_apply(|name| std::env::var_os(name).is_some()) {
        std::env::set_var(name, value);
    }
}

/// The MCP server's token, from [`engine_mcp::TOKEN_ENV`], removed from the environment
/// like secrets so that no plugin or child process reads it.
///
/// # Safety
///
/// As [`take_environment`](engine_core::config::take_environment): no other thread may
/// exist yet.
unsafe fn take_token() -> Result<Option<String>, String> {
    let Some(value) = std::env::var_os(engine_mcp::TOKEN_ENV) else {
        return Ok(None);
    };
    std::env::remove_var(engine_mcp::TOKEN_ENV);
    value
        .into_string()
        .map(Some)
        .map_err(|_| format!("{} is not UTF-8 text", engine_mcp::TOKEN_ENV))
}

/// Binds `addr`, prints the URL on stdout (the one line a script needs to find a port
/// chosen by the system), and serves until Ctrl-C or `SIGTERM` (what a service manager
/// or an orchestrator sends to stop a replica): turns under way are then cancelled, so
/// each answers its open calls and is stored as cancelled, rather than left interrupted.
async fn serve_http(
    server: McpServer,
    addr: SocketAddr,
    options: engine_mcp::HttpOptions,
) -> Result<(), engine_mcp::HttpError> {
    use tokio::signal::unix::{signal, SignalKind};
    let listener = tokio::net::TcpListener::bind(addr).await?;
    options.check(listener.local_addr()?)?;
    // Listening before the URL is printed: a signal sent once a script sees it stops the
    // server as it should. Without a handler the server runs until killed, which is
    // fine too.
    let listening = |kind| {
        signal(kind)
            .inspect_err(|error| tracing::error!("a stop signal will not be heard: {error}"))
            .ok()
    };
    let (mut interrupt, mut terminate) = (
        listening(SignalKind::interrupt()),
        listening(SignalKind::terminate()),
    );
    println!("http://{}/mcp", listener.local_addr()?);
    let shutdown = CancellationToken::new();
    tokio::spawn({
        let shutdown = shutdown.clone();
        async move {
            async fn heard(signal: Option<&mut tokio::signal::unix::Signal>) {
                match signal {
                    Some(signal) => drop(signal.recv().await),
                    None => std::future::pending::<()>().await,
                }
            }
            tokio::select! {
                () = heard(interrupt.as_mut()) => {}
                () = heard(terminate.as_mut()) => {}
            }
            shutdown.cancel();
        }
    });
    engine_mcp::serve_http(server, listener, options, shutdown).await
}

fn call(engine: &Engine, turn: &Turn, tool: &str, arguments: &str, timeout: Duration) -> ExitCode {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime starts");
    let outcome = runtime.block_on(async {
        let deadline = tokio::time::Instant::now() + timeout;
        // In a conversation, with the state its tools kept there, keeping what this
        // call writes: a state tool can be tried call by call.
        engine
            .call_in_conversation(turn, Call::new(tool, arguments).deadline(deadline))
            .await
    });
    match outcome {
        Ok(output) => {
            println!("{output}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            println!("{}", error.to_json());
            if error.kind() == CallErrorKind::UnknownTool {
                explain_left_out(engine, turn, tool);
            }
            ExitCode::FAILURE
        }
    }
}

/// What is logged: INFO and up, but rmcp's only from WARN (it logs every request at
/// INFO); or what `RUST_LOG` says, in tracing's target syntax (`rmcp=info,debug`), each
/// directive trimmed, with INFO for whatever it names no level for. A `RUST_LOG` that
/// does not parse is answered beside the default, to be logged.
fn log_levels(variable: Option<String>) -> (Targets, Option<String>) {
    let default = Targets::new()
        .with_default(tracing::Level::INFO)
        .with_target("rmcp", tracing::Level::WARN);
    let Some(variable) = variable else {
        return (default, None);
    };
    let directives: Vec<&str> = variable
        .split(',')
        .map(str::trim)
        .filter(|directive| !directive.is_empty())
        .collect();
    if directives.is_empty() {
        return (default, None);
    }
    match directives.join(",").parse::<Targets>() {
        Ok(levels) if levels.default_level().is_some() => (levels, None),
        Ok(levels) => (levels.with_default(tracing::Level::INFO), None),
        Err(error) => (default, Some(error.to_string())),
    }
}

/// Says on stderr why the agent left out `tool` when it is linked: the caller (a person)
/// learns what to configure, where the model reads only `unknown_tool`.
fn explain_left_out(engine: &Engine, turn: &Turn, tool: &str) {
    let (Some(linked), Some(agent)) = (engine.tool(tool), engine.agent(turn.agent())) else {
        return;
    };
    if let Some(left) = agent
        .left_out()
        .iter()
        .find(|left| left.tool == linked.id())
    {
        eprintln!(
            "`{}` is linked, and the agent `{}` leaves it out: {}",
            left.tool,
            agent.name(),
            left.reasons.join("; ")
        );
    } else if linked.needs_conversation() {
        eprintln!(
            "`{}` works only in a conversation: give `--conversation` (and `--subscriber`)",
            linked.id()
        );
    }
}

#[cfg(test)]
mod tests {
    use tracing::Level;

    use super::log_levels;

    fn enabled(variable: Option<&str>, target: &str, level: Level) -> bool {
        log_levels(variable.map(str::to_owned))
            .0
            .would_enable(target, &level)
    }

    #[test]
    fn rmcp_logs_from_warn_and_the_rest_from_info_by_default() {
        for unset in [None, Some(""), Some(" , ")] {
            assert!(!enabled(unset, "rmcp::service", Level::INFO));
            assert!(enabled(unset, "rmcp::service", Level::WARN));
            assert!(enabled(unset, "engine_core", Level::INFO));
            assert!(!enabled(unset, "engine_core", Level::DEBUG));
        }
    }

    #[test]
    fn a_rust_log_with_slips_still_logs_warnings_and_a_bad_one_is_reported() {
        // Spaces around directives, a trailing comma, a word that is not a level: each
        // leaves INFO for what it does not name.
        for slip in ["rmcp=info, info", "info,", "inof", "rmcp=debug"] {
            assert!(enabled(Some(slip), "engine_core", Level::WARN), "{slip}");
            assert!(log_levels(Some(slip.to_owned())).1.is_none(), "{slip}");
        }
        assert!(enabled(
            Some("rmcp=info, info"),
            "rmcp::service",
            Level::INFO
        ));
        assert!(enabled(Some("rmcp=debug"), "rmcp", Level::DEBUG));
        let (levels, ignored) = log_levels(Some("rmcp=verbose".to_owned()));
        assert!(ignored.is_some());
        assert!(!levels.would_enable("rmcp", &Level::INFO));
    }
}
