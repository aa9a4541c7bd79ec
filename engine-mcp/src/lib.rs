//! An engine's agent over MCP, built on rmcp (the official Rust MCP SDK): one handler,
//! served over stdio ([`serve_stdio`]) or streamable HTTP at `/mcp` ([`streamable_http`]:
//! a router that an HTTP server mounts behind its guards, as engine-server does).
//!
//! One server serves one agent: `tools/list` is that agent's MCP catalog (rendered once
//! per set of titles), in the client's locale; `tools/call` goes through `Engine::call`,
//! so the agent's grants, the deadline, cancellation and error handling are the ones
//! every other surface gets. An MCP session is not a conversation: tools that read one (state,
//! artifacts, the subscriber) are not offered here, and are unknown if called.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use engine_core::config::EngineConfig;
//! use engine_core::Engine;
//! use engine_mcp::{McpServer, Options};
//!
//! // Secrets: see `engine_core::config::take_environment`, called first thing in `main`.
//! let config = EngineConfig::load(None, Vec::new())?;
//! let engine = Engine::builder().config(config).build()?;
//! let server = McpServer::new(Arc::new(engine), "default", Options::default())?;
//! engine_mcp::serve_stdio(server).await?;
//! # Ok(()) }
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod call;
/// Using an engine from an MCP client.
#[doc = include_str!("../docs/clients.md")]
pub mod guide {}
mod locale;
pub mod streamable_http;

use std::sync::Arc;
use std::time::Duration;

use engine_core::{Engine, Format, Session, UnknownAgent};
use rmcp::model::SubscriptionFilter;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CustomRequest, CustomResult, ErrorCode,
    Implementation, ListToolsResult, PaginatedRequestParams, ResultType, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::{
    NotificationContext, RequestContext, ServerInitializeError, SubscriptionContext,
};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};

pub use locale::preferred_language;

/// How the server answers: the default locale and the time a call may take.
#[derive(Clone, Debug)]
pub struct Options {
    /// The locale of titles and of calls when a request names none (BCP 47).
    pub locale: String,
    /// How long a tool call may run before it is stopped and reported as timed out.
    pub timeout: Duration,
    /// The name clients are given for the server (`serverInfo.name`): the image's own.
    pub server_name: String,
    /// The version clients are given for it.
    pub server_version: String,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            locale: "en-US".into(),
            timeout: Duration::from_secs(30),
            server_name: "plugin-sdk-engine".into(),
            server_version: engine_core::ENGINE_VERSION.into(),
        }
    }
}

/// The MCP face of one agent of an engine, in one session: its `tools/call`s are turns
/// that share the session's model budget (the agent's `session_cap_usd`).
pub struct McpServer {
    engine: Arc<Engine>,
    options: Arc<Options>,
    session: Session,
    /// A legacy session's `tools/list_changed` sender, stopped with the session.
    list_changed: std::sync::Mutex<Option<tokio::task::AbortHandle>>,
}

impl Drop for McpServer {
    fn drop(&mut self) {
        if let Some(task) = self.list_changed.get_mut().ok().and_then(Option::take) {
            task.abort();
        }
    }
}

impl McpServer {
    /// The engine it serves.
    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// Serves the tools `agent` equips in `engine`, with `options`; refused if `engine`
    /// has no such agent.
    pub fn new(engine: Arc<Engine>, agent: &str, options: Options) -> Result<Self, UnknownAgent> {
        let session = engine.session(agent)?;
        Ok(Self {
            engine,
            options: Arc::new(options),
            session,
            list_changed: Default::default(),
        })
    }

    /// The same server for another session, with a budget of its own; refused once a
    /// reload of the configuration removed the agent.
    pub fn for_new_session(&self) -> Result<Self, UnknownAgent> {
        Ok(Self {
            engine: Arc::clone(&self.engine),
            options: Arc::clone(&self.options),
            session: self.engine.session_like(&self.session)?,
            list_changed: Default::default(),
        })
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        // The list changes when external tools are reloaded.
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        ServerConfig::new(capabilities).with_server_info(Implementation::new(
            self.options.server_name.clone(),
            self.options.server_version.clone(),
        ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let locale = locale::for_request(&context, &self.options.locale);
        // The catalog is rendered once per set of titles, then kept: it is read
        // into rmcp's result type, never rebuilt from the tools.
        let agent = self.engine.session_agent(&self.session).map_err(removed)?;
        let catalog = agent.catalog(Format::Mcp, &locale);
        let mut result: ListToolsResult = serde_json::from_slice(&catalog).map_err(|error| {
            McpError::internal_error(format!("the MCP catalog does not parse: {error}"), None)
        })?;
        // What rmcp's constructors set; it drops the field again for older protocols.
        result.result_type = Some(ResultType::COMPLETE);
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let locale = locale::for_request(&context, &self.options.locale);
        let turn = self
            .engine
            .turn_in(&self.session)
            .map_err(removed)?
            .with_locale(locale);
        let call = call::ToolsCall {
            engine: &self.engine,
            turn: &turn,
            timeout: self.options.timeout,
            cancel: &context.ct,
        };
        call.run(&request).await.map(CallToolResponse::from)
    }

    /// A legacy session (protocol before 2026-07-28, stdio): `tools/list_changed` is
    /// sent on the session itself, each time the engine installs external tools.
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let mut changed = self.engine.extensions_changed();
        changed.mark_unchanged();
        let peer = context.peer;
        let task = tokio::spawn(async move {
            while changed.changed().await.is_ok() {
                if peer.notify_tool_list_changed().await.is_err() {
                    return; // the client went away
                }
            }
        });
        if let Ok(mut slot) = self.list_changed.lock() {
            if let Some(earlier) = slot.replace(task.abort_handle()) {
                earlier.abort();
            }
        }
    }

    /// Protocol 2026-07-28 has no sessions: a client that wants to hear of changes to
    /// the tool list asks with `subscriptions/listen`.
    fn accepted_subscription_filter(
        &self,
        _requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(SubscriptionFilter::builder().tools_list_changed().build())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let mut changed = self.engine.extensions_changed();
        changed.mark_unchanged();
        loop {
            tokio::select! {
                () = context.cancelled() => return Ok(()),
                result = changed.changed() => {
                    if result.is_err() || context.sink().notify_tool_list_changed().await.is_err() {
                        return Ok(());
                    }
                }
            }
        }
    }

    /// A method rmcp does not know (a newer client's, or a typo): a JSON-RPC error that
    /// names it, never silence.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        Err(McpError::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("`{}` is not a method this server knows", request.method),
            None,
        ))
    }
}

/// Serves `server` over stdin and stdout until the client disconnects (also before it
/// initialized: a client that goes away is not an error). Log to stderr: stdout carries
/// the protocol.
pub async fn serve_stdio(server: McpServer) -> Result<(), Box<dyn std::error::Error>> {
    let running = match server.serve(rmcp::transport::stdio()).await {
        Ok(running) => running,
        Err(ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(error) => return Err(error.into()),
    };
    running.waiting().await?;
    Ok(())
}

/// The answer to a request of a session whose agent a reload of the configuration removed.
fn removed(unknown: UnknownAgent) -> McpError {
    McpError::invalid_request(
        format!(
            "the agent `{}` was removed from the engine's configuration",
            unknown.name
        ),
        None,
    )
}
