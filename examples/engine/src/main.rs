//! An engine image: the plugins it links are the plugins it has.
//!
//! Every command starts the engine first, and the engine refuses to start on any problem
//! with the linked plugins (exit status 1, every problem on stderr).

use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use engine_core::{Call, Format, Registry};
use plugin_sdk::hook::Event;
use plugin_sdk::ToolContext;

// Linking is installing: name each plugin crate once so the linker keeps it.
use acme_crm as _;
use guard as _;
use weather as _;

#[derive(Parser)]
#[command(about = "An example engine built from engine-core and the example plugins")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the linked plugins and their tools, then the hooks by event, with summaries
    /// for people.
    Tools {
        /// The reader's locale (BCP 47), for display names and summaries.
        #[arg(long, default_value = "en-US")]
        locale: String,
    },
    /// Print a tool catalog as a provider or an MCP client receives it.
    Catalog {
        /// openai, anthropic, gemini or mcp.
        #[arg(long)]
        format: Format,
        /// The reader's locale, for MCP titles.
        #[arg(long, default_value = "en-US")]
        locale: String,
    },
    /// Call a tool once with JSON arguments and print its output.
    Call {
        /// The tool, by id (`weather:weather`) or wire name (`weather__weather`).
        tool: String,
        /// The arguments, as JSON text.
        arguments: String,
        /// Stop the tool after this many milliseconds.
        #[arg(long, default_value_t = 30_000)]
        timeout_ms: u64,
    },
    /// Run the start-up validation and report what it found; exit 1 on any problem.
    Check,
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let registry = Registry::linked_or_exit();
    match cli.command {
        Command::Tools { locale } => {
            print!("{}", list_tools(&registry, &locale));
            print!("{}", list_hooks(&registry, &locale));
        }
        Command::Catalog { format, locale } => {
            println!(
                "{}",
                String::from_utf8_lossy(&registry.catalog(format, &locale))
            );
        }
        Command::Call {
            tool,
            arguments,
            timeout_ms,
        } => {
            return call(
                &registry,
                &tool,
                &arguments,
                Duration::from_millis(timeout_ms),
            )
        }
        Command::Check => print!("{}", check_report(&registry)),
    }
    ExitCode::SUCCESS
}

fn call(registry: &Registry, tool: &str, arguments: &str, timeout: Duration) -> ExitCode {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime starts");
    let context = ToolContext::new();
    let outcome = runtime.block_on(async {
        let deadline = tokio::time::Instant::now() + timeout;
        registry
            .call(Call::new(tool, arguments, &context).deadline(deadline))
            .await
    });
    match outcome {
        Ok(output) => {
            println!("{output}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            println!("{}", error.to_json());
            ExitCode::FAILURE
        }
    }
}

fn list_tools(registry: &Registry, locale: &str) -> String {
    let mut out = String::new();
    for (plugin, tools) in registry.plugins() {
        let name = plugin
            .display_name
            .map_or(plugin.namespace, |text| text.resolve(locale));
        out += &format!(
            "{name} ({} {}, engine {})\n",
            plugin.package, plugin.version, plugin.engine
        );
        if let Some(description) = plugin.description {
            out += &format!("  {}\n", description.resolve(locale));
        }
        for tool in tools {
            let category = tool.descriptor().category.unwrap_or("-");
            out += &format!(
                "  {:<28} [{category}] {}\n",
                tool.id(),
                tool.descriptor().summary_for(locale)
            );
        }
    }
    out
}

/// The hooks of each event, in the order they run, with position and timeout.
fn list_hooks(registry: &Registry, locale: &str) -> String {
    let mut out = String::from("Hooks, by event, in the order they run\n");
    for event in Event::ALL {
        let hooks = registry.hooks().of(event);
        if hooks.is_empty() {
            out += &format!("  {event}: none\n");
            continue;
        }
        out += &format!("  {event}:\n");
        for hook in hooks {
            let descriptor = hook.descriptor();
            let mutates = if descriptor.mutates_response {
                ", mutates the response"
            } else {
                ""
            };
            out += &format!(
                "    {:>5}  {:<26} {} ({} ms{mutates})\n",
                descriptor.position,
                hook.id(),
                descriptor.summary_for(locale),
                descriptor.timeout.as_millis()
            );
        }
    }
    out
}

/// What `check` prints when the engine started: what it validated and rendered.
fn check_report(registry: &Registry) -> String {
    let plugins = registry.plugins().count();
    let tools = registry.tools().len();
    let hooks = registry.hooks().all().count();
    let mut out = format!(
        "ok: {plugins} plugins, {tools} tools, {hooks} hooks, engine-core {}\n",
        engine_core::ENGINE_VERSION
    );
    for format in Format::ALL {
        let bytes = registry.catalog(format, "en-US").len();
        out += &format!("  catalog {format:<10} {bytes} bytes\n");
    }
    for event in Event::ALL {
        let ids: Vec<&str> = registry
            .hooks()
            .of(event)
            .iter()
            .map(|hook| hook.id())
            .collect();
        let listed = if ids.is_empty() {
            "none".to_owned()
        } else {
            ids.join(", ")
        };
        out += &format!("  hooks {event:<18} {listed}\n");
    }
    let streaming = if registry.hooks().mutate_responses() {
        "off: a hook may replace or regenerate replies"
    } else {
        "on"
    };
    out += &format!("  streaming of replies: {streaming}\n");
    out
}
