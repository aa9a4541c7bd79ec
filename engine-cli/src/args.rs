//! The command line as clap parses it: the commands and their arguments.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand};
use engine_core::{Format, Turn};

use crate::Image;

#[derive(Parser)]
pub(crate) struct Cli {
    /// The engine's configuration (TOML): agents, their secrets and grants. Secrets may
    /// also come from ENGINE_SECRET__<agent>__<key> variables.
    #[arg(long, env = "ENGINE_CONFIG", global = true)]
    pub(crate) config: Option<PathBuf>,
    /// The agent whose tools a command uses.
    #[arg(long, default_value = engine_core::config::DEFAULT_AGENT, global = true)]
    pub(crate) agent: String,
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// List the linked plugins and their tools, the hooks by event, and what each agent
    /// equips, with summaries for people.
    Tools {
        /// The reader's locale (BCP 47), for display names and summaries.
        #[arg(long, default_value = "en-US")]
        locale: String,
    },
    /// List the linked plugins' catalogue: what a marketplace page shows of each (names,
    /// descriptions, category, publisher, documentation, icon) and its tools, hooks and
    /// channels. Needs no configuration.
    Plugins {
        #[arg(long, value_enum, default_value_t = PluginsFormat::Text)]
        format: PluginsFormat,
        /// The reader's locale (BCP 47), for text.
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
    /// starts and ends, with its arguments on one line (cut at 80 characters).
    Chat {
        /// Show each call's arguments whole, indented under its line, rather than cut.
        #[arg(long)]
        full_arguments: bool,
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
    /// Issue, list or revoke the dev tokens plugin authors open dev sessions with
    /// (`plugin-dev`): per agent, with an expiry, kept hashed under `data_dir`.
    DevToken {
        #[command(subcommand)]
        command: DevTokenCommand,
    },
    /// List, upload, delete or wipe the agent's (`--agent`) knowledge documents, as an
    /// operator: what no tool may do (a tool never wipes; below `manage` it changes only
    /// its own plugin's documents). Needs an agent that grants knowledge, for the engine
    /// opens the store only then.
    Knowledge {
        #[command(subcommand)]
        command: KnowledgeCommand,
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

/// How `plugins` prints the catalogue.
#[derive(Clone, Copy, clap::ValueEnum)]
pub(crate) enum PluginsFormat {
    /// For people, in the reader's locale.
    Text,
    /// For scripts and catalogues: every language each text gives, the icon as a data
    /// URL.
    Json,
}

#[derive(Subcommand)]
pub(crate) enum ImageCommand {
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
pub(crate) enum RequirementsFormat {
    /// Each package with the plugins that need it; each variable with its default, its
    /// plugins, and whether the environment sets it.
    Json,
    /// Lines for an image's runtime stage: `RUN apt-get install`, `ENV`.
    Dockerfile,
    /// The package names on one line, for `apt-get install`.
    Packages,
}

#[derive(Subcommand)]
pub(crate) enum ConfigCommand {
    /// Report every problem start-up would refuse in the configuration, alone and with
    /// what this binary links, without starting anything; exit 1 on any.
    Check {
        /// The configuration to check, instead of `--config`.
        file: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
pub(crate) enum DevTokenCommand {
    /// Issue a token for the agent (`--agent`) and print it (once: only its hash is
    /// kept).
    Issue {
        /// How long it works, in minutes (at most 30 days).
        #[arg(long, default_value_t = 8 * 60, value_parser = clap::value_parser!(u64).range(1..=30 * 24 * 60))]
        ttl_minutes: u64,
    },
    /// List the tokens: id, agent, and whether each still works.
    List,
    /// Revoke a token by its id (`engine dev-token list`); its sessions close within
    /// seconds.
    Revoke {
        /// The token's id.
        id: String,
    },
}

#[derive(Subcommand)]
pub(crate) enum KnowledgeCommand {
    /// List the documents by name, a page at a time: id, name, size, who wrote it. When
    /// more follow, stderr says how to ask for the next page.
    List {
        /// The most documents on the page (at most 1,000).
        #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u16).range(1..=1000))]
        limit: u16,
        /// Start after this name: the cursor the page before printed.
        #[arg(long)]
        after: Option<String>,
        #[arg(long, value_enum, default_value_t = ListFormat::Text)]
        format: ListFormat,
    },
    /// Upload text files (UTF-8) as documents, each named by its file name; a document of
    /// that name is replaced. Every file is read before any is written: one that cannot
    /// be read stores nothing.
    Upload {
        /// The files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// The document's name, instead of the file's (one file only).
        #[arg(long)]
        name: Option<String>,
        /// Who uploads, as the documents record it (their `origin_ref`).
        #[arg(long, default_value = "operator")]
        by: String,
    },
    /// Delete documents by id (`engine knowledge list` shows them).
    Delete {
        /// The documents' ids.
        #[arg(required = true)]
        ids: Vec<i64>,
    },
    /// Delete every document of the agent.
    Wipe {
        /// Say yes: nothing asks again.
        #[arg(long, required = true)]
        yes: bool,
    },
}

/// How `knowledge list` prints a page.
#[derive(Clone, Copy, clap::ValueEnum)]
pub(crate) enum ListFormat {
    /// A line per document, for people.
    Text,
    /// The page as JSON: `documents` and `next`.
    Json,
}

/// A call's timeout in milliseconds: at least 1, at most a day, so that the deadline
/// (now plus the timeout) cannot overflow the clock and panic.
pub(crate) fn timeout_ms() -> clap::builder::RangedU64ValueParser {
    clap::value_parser!(u64).range(1..=24 * 60 * 60 * 1000)
}

/// Who may reach the HTTP server, and how much it serves at once.
#[derive(clap::Args)]
pub(crate) struct HttpArgs {
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
        default_value_t = engine_server::HttpOptions::default().max_in_flight,
        value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..),
    )]
    max_in_flight: usize,
    /// The most connections open at once; more are answered 503 and closed.
    #[arg(
        long,
        default_value_t = engine_server::HttpOptions::default().max_connections,
        value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..),
    )]
    max_connections: usize,
    /// Milliseconds a client has to send a request's head (on a new or an idle keep-alive
    /// connection) before the connection is closed.
    #[arg(
        long,
        default_value_t = millis(engine_server::HttpOptions::default().header_read_timeout),
        value_parser = timeout_ms(),
    )]
    header_read_timeout_ms: u64,
    /// Milliseconds a client has to send a request's body before it is answered 408.
    #[arg(
        long,
        default_value_t = millis(engine_server::HttpOptions::default().body_read_timeout),
        value_parser = timeout_ms(),
    )]
    body_read_timeout_ms: u64,
}

pub(crate) fn millis(duration: Duration) -> u64 {
    duration.as_millis().try_into().unwrap_or(u64::MAX)
}

impl HttpArgs {
    pub(crate) fn options(self, token: Option<String>) -> engine_server::HttpOptions {
        engine_server::HttpOptions {
            token,
            allowed_origins: self.allowed_origins,
            allowed_hosts: self.allowed_hosts,
            max_in_flight: self.max_in_flight,
            max_connections: self.max_connections,
            header_read_timeout: Duration::from_millis(self.header_read_timeout_ms),
            body_read_timeout: Duration::from_millis(self.body_read_timeout_ms),
            dev_tokens: None,
            configuration: None,
        }
    }
}

/// Which conversation a turn is in, and for whom.
#[derive(clap::Args)]
pub(crate) struct ConversationArgs {
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
    pub(crate) fn place(self, turn: Turn) -> Turn {
        let conversation = self
            .conversation
            .unwrap_or_else(|| format!("cli-{}", std::process::id()));
        let turn = turn
            .in_conversation(self.subscriber, conversation.clone())
            .via(engine_core::CLI_CHANNEL, &conversation);
        match self.locale {
            Some(locale) => turn.with_locale(locale),
            None => turn,
        }
    }
}

/// What both MCP transports take.
#[derive(clap::Args)]
pub(crate) struct McpArgs {
    /// The locale of tool titles when the client names none (in `_meta.locale`, or over
    /// HTTP in `Accept-Language`).
    #[arg(long, default_value = "en-US")]
    locale: String,
    /// Stop a tool call after this many milliseconds (1 to 86400000, a day).
    #[arg(long, default_value_t = 30_000, value_parser = timeout_ms())]
    timeout_ms: u64,
}

impl McpArgs {
    pub(crate) fn options(self, image: &Image) -> engine_mcp::Options {
        engine_mcp::Options {
            locale: self.locale,
            timeout: Duration::from_millis(self.timeout_ms),
            server_name: image.name.to_owned(),
            server_version: image.version.to_owned(),
        }
    }
}
