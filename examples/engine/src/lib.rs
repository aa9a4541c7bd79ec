//! The example engine's command line, for any set of linked plugins: a binary names its
//! plugin crates and calls [`run`]. `src/main.rs` is the example image.
//!
//! Every command starts the engine first, and the engine refuses to start on any problem
//! with the linked plugins (exit status 1, every problem on stderr).

use std::future::Future;
use std::io::IsTerminal;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Parser, Subcommand};
use engine_core::{Call, CancellationToken, Format, Registry};
use engine_mcp::McpServer;
use plugin_sdk::hook::Event;
use plugin_sdk::ToolContext;

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
    /// Serve the tools over MCP on stdin and stdout (for Claude Desktop, Cursor, ...).
    Mcp {
        #[command(flatten)]
        options: McpArgs,
    },
    /// Serve the tools over MCP's streamable HTTP at `http://ADDR/mcp`.
    Serve {
        /// The address to listen on; port 0 picks a free one. The URL is printed.
        #[arg(long, default_value = "127.0.0.1:8080")]
        addr: SocketAddr,
        #[command(flatten)]
        options: McpArgs,
    },
}

/// What both MCP transports take.
#[derive(clap::Args)]
struct McpArgs {
    /// The locale of tool titles when the client names none (in `_meta.locale`, or over
    /// HTTP in `Accept-Language`).
    #[arg(long, default_value = "en-US")]
    locale: String,
    /// Stop a tool call after this many milliseconds.
    #[arg(long, default_value_t = 30_000)]
    timeout_ms: u64,
}

impl McpArgs {
    fn options(self) -> engine_mcp::Options {
        engine_mcp::Options {
            locale: self.locale,
            timeout: Duration::from_millis(self.timeout_ms),
        }
    }
}

/// Parses the command line, starts the engine on what the binary linked, and runs the
/// command.
pub fn run() -> ExitCode {
    // Logs go to stderr: stdout carries command output, and the MCP protocol on stdio.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
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
        Command::Mcp { options } => {
            let server = McpServer::new(Arc::new(registry), options.options());
            return serve(engine_mcp::serve_stdio(server));
        }
        Command::Serve { addr, options } => {
            let server = McpServer::new(Arc::new(registry), options.options());
            return serve(serve_http(server, addr));
        }
    }
    ExitCode::SUCCESS
}

/// Runs a server to its end on a multi-threaded runtime; exit 1 if it failed.
fn serve<E: std::fmt::Display>(server: impl Future<Output = Result<(), E>>) -> ExitCode {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime starts");
    match runtime.block_on(server) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("the MCP server stopped: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Binds `addr`, prints the URL on stdout (the one line a script needs to find a port
/// chosen by the system), and serves until Ctrl-C.
async fn serve_http(server: McpServer, addr: SocketAddr) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    println!("http://{}/mcp", listener.local_addr()?);
    let shutdown = CancellationToken::new();
    tokio::spawn({
        let shutdown = shutdown.clone();
        async move {
            // Without a signal handler the server runs until killed, which is fine too.
            if tokio::signal::ctrl_c().await.is_ok() {
                shutdown.cancel();
            }
        }
    });
    engine_mcp::serve_http(server, listener, shutdown).await
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
