//! `/mcp` over streamable HTTP, as a router an HTTP server mounts behind its own guards
//! (engine-server's: the token, the bounds, the deadlines).
//!
//! It keeps no sessions: protocol 2026-07-28 has none, and older clients are served
//! statelessly too, so there is no session state for clients to pile up. Each request is
//! answered once it has its result (JSON, not an event stream), which is what makes a
//! server's bound on requests in flight count every tool call until it ends.

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::McpServer;

/// Who may reach `/mcp`, and when its calls stop.
/// No `Default`: an empty list of hosts would serve every `Host` (rmcp's rule for an
/// empty list), and an empty list of origins would refuse every browser.
#[derive(Clone, Debug)]
pub struct HttpTransport {
    /// The `Host`s served (`name` or `name:port`), rmcp's guard against DNS rebinding;
    /// a request for another is refused. Empty, every `Host` is served: give at least
    /// the names clients reach the server by (engine-server gives the loopback ones).
    pub allowed_hosts: Vec<String>,
    /// The browser origins served (`scheme://host:port`, `:*` for any port); a request
    /// without `Origin` (not from a browser) passes.
    pub allowed_origins: Vec<String>,
    /// Cancelled when the server shuts down: the calls under way are stopped.
    pub shutdown: CancellationToken,
}

/// The largest request body `/mcp` reads (rmcp's limit): a server that reads bodies
/// itself first, to put a deadline on them, reads no more.
pub fn max_request_body_bytes() -> usize {
    StreamableHttpServerConfig::default().max_request_body_bytes
}

/// A router that serves `server` at `/mcp`. rmcp asks for a handler per request: each is
/// a session of its own, with its own session budget (the agent's window cap bounds them
/// together); once a reload of the configuration removed the agent, a request is refused.
pub fn router(server: McpServer, transport: HttpTransport) -> axum::Router {
    let config = StreamableHttpServerConfig::default()
        .with_cancellation_token(transport.shutdown)
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_allowed_hosts(transport.allowed_hosts)
        .with_allowed_origins(transport.allowed_origins)
        .enforce_origin_validation();
    let service: StreamableHttpService<McpServer, LocalSessionManager> = StreamableHttpService::new(
        move || server.for_new_session().map_err(std::io::Error::other),
        Default::default(),
        config,
    );
    axum::Router::new().nest_service("/mcp", service)
}
