//! The streamable HTTP transport, guarded by tower layers: a bearer token (required when
//! other hosts can reach the server), `Origin` and `Host` checks, and a bound on the
//! requests served at once.
//!
//! The server keeps no sessions: protocol 2026-07-28 has none, and older clients are served
//! statelessly too, so there is no session state for clients to pile up. Each request is
//! answered once it has its result (JSON, not an event stream), which is what makes the
//! in-flight bound count every tool call until it ends.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Body;
use axum::error_handling::HandleErrorLayer;
use axum::http::{header, HeaderValue, Request, Response, StatusCode};
use axum::BoxError;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use subtle::ConstantTimeEq;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tower::limit::GlobalConcurrencyLimitLayer;
use tower::load_shed::LoadShedLayer;
use tower::ServiceBuilder;
use tower_http::validate_request::{ValidateRequest, ValidateRequestHeaderLayer};

use crate::McpServer;

/// The environment variable an engine reads the server's token from (the example engine
/// does, and removes it from its environment once read).
pub const TOKEN_ENV: &str = "ENGINE_MCP_TOKEN";

/// The browser origins always allowed: pages served from this machine.
const LOOPBACK_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "http://127.0.0.1:*",
    "http://[::1]:*",
    "https://localhost:*",
    "https://127.0.0.1:*",
    "https://[::1]:*",
];

/// The `Host`s always allowed (rmcp's guard against DNS rebinding).
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// Who may use the HTTP server, and how much it serves at once.
#[derive(Clone)]
pub struct HttpOptions {
    /// The token every request must carry as `Authorization: Bearer <token>` (compared in
    /// constant time; 401 otherwise). Required to listen on an address other hosts can
    /// reach; an empty token is no token.
    pub token: Option<String>,
    /// Browser origins allowed besides the loopback ones, as `scheme://host:port` (`:*`
    /// for any port). A request whose `Origin` is none of them is answered 403; a request
    /// without `Origin` (not from a browser) passes.
    pub allowed_origins: Vec<String>,
    /// Names (or `name:port`) clients reach the server by, besides the loopback ones; a
    /// request for another `Host` is answered 403.
    pub allowed_hosts: Vec<String>,
    /// The most requests served at once; one more is answered 503 at once, never queued.
    pub max_in_flight: usize,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            token: None,
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            max_in_flight: 64,
        }
    }
}

impl HttpOptions {
    /// Whether these options may serve on `addr`: an address other hosts can reach needs a
    /// token. [`serve_http`] checks it; a caller that announces the address checks first.
    pub fn check_address(&self, addr: SocketAddr) -> Result<(), HttpError> {
        if self.token().is_none() && !addr.ip().to_canonical().is_loopback() {
            return Err(HttpError::NoToken { addr });
        }
        Ok(())
    }

    fn token(&self) -> Option<&str> {
        self.token.as_deref().filter(|token| !token.is_empty())
    }
}

impl std::fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpOptions")
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field("allowed_origins", &self.allowed_origins)
            .field("allowed_hosts", &self.allowed_hosts)
            .field("max_in_flight", &self.max_in_flight)
            .finish()
    }
}

/// Why the HTTP server did not serve.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HttpError {
    /// The address is reachable from other hosts and there is no token.
    #[error(
        "refusing to serve MCP on {addr} without a token: other hosts can reach that address. \
         Set {TOKEN_ENV} to a secret (clients then send `Authorization: Bearer <token>`), \
         or listen on a loopback address such as 127.0.0.1:{port}",
        port = .addr.port()
    )]
    NoToken {
        /// The address listened on.
        addr: SocketAddr,
    },
    /// The listener failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Serves `server` over streamable HTTP at `/mcp` on `listener`, guarded as `options` say,
/// until `shutdown` is cancelled. Refuses to start without a token when the listener's
/// address is not a loopback one.
pub async fn serve_http(
    server: McpServer,
    listener: TcpListener,
    options: HttpOptions,
    shutdown: CancellationToken,
) -> Result<(), HttpError> {
    options.check_address(listener.local_addr()?)?;
    let bearer = options.token().map(Bearer::new);
    let config = StreamableHttpServerConfig::default()
        .with_cancellation_token(shutdown.child_token())
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_allowed_hosts(
            LOOPBACK_HOSTS
                .iter()
                .map(|host| host.to_string())
                .chain(options.allowed_hosts),
        )
        .with_allowed_origins(
            LOOPBACK_ORIGINS
                .iter()
                .map(|origin| origin.to_string())
                .chain(options.allowed_origins),
        )
        .enforce_origin_validation();
    // rmcp asks for a service per request: each is a session of its own, with its own
    // session budget (the agent's window cap bounds them together).
    let service: StreamableHttpService<McpServer, LocalSessionManager> = StreamableHttpService::new(
        move || Ok(server.for_new_session()),
        Default::default(),
        config,
    );
    let in_flight = ServiceBuilder::new()
        .layer(HandleErrorLayer::new(overloaded))
        .layer(LoadShedLayer::new())
        .layer(GlobalConcurrencyLimitLayer::with_semaphore(Arc::new(
            Semaphore::new(options.max_in_flight),
        )));
    let router = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(in_flight);
    // The last layer is the outermost: a request without the token takes no permit.
    let router = match bearer {
        Some(bearer) => router.layer(ValidateRequestHeaderLayer::custom(bearer)),
        None => router,
    };
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown.cancelled_owned())
        .await?;
    Ok(())
}

/// The answer to a request over the in-flight bound.
async fn overloaded(_: BoxError) -> Response<Body> {
    Response::builder()
        .status(StatusCode::SERVICE_UNAVAILABLE)
        .header(header::RETRY_AFTER, "1")
        .body(Body::from(
            "the server is serving as many requests as it takes: retry later",
        ))
        .expect("a valid response")
}

/// Checks `Authorization: Bearer <token>`.
#[derive(Clone)]
struct Bearer {
    token: Arc<[u8]>,
}

impl Bearer {
    fn new(token: &str) -> Self {
        Self {
            token: token.as_bytes().into(),
        }
    }

    fn admits(&self, authorization: Option<&HeaderValue>) -> bool {
        // Bytes, not text: a token need not be ASCII.
        let Some(value) = authorization.map(HeaderValue::as_bytes) else {
            return false;
        };
        let Some(space) = value.iter().position(|&byte| byte == b' ') else {
            return false;
        };
        let (scheme, token) = (&value[..space], &value[space + 1..]);
        // The scheme is case-insensitive (RFC 9110); the token is compared in constant time,
        // so the time taken tells nothing about how much of it a guess got right.
        scheme.eq_ignore_ascii_case(b"bearer") && bool::from(token.ct_eq(&self.token))
    }
}

impl<B> ValidateRequest<B> for Bearer {
    type ResponseBody = Body;

    fn validate(&mut self, request: &mut Request<B>) -> Result<(), Response<Body>> {
        if self.admits(request.headers().get(header::AUTHORIZATION)) {
            return Ok(());
        }
        Err(Response::builder()
            .status(StatusCode::UNAUTHORIZED)
            .header(header::WWW_AUTHENTICATE, "Bearer")
            .body(Body::from(
                "this MCP server needs `Authorization: Bearer <token>`, with the token it was started with",
            ))
            .expect("a valid response"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bearer_check_wants_the_scheme_and_the_exact_token() {
        let bearer = Bearer::new("s3cret");
        let admits = |value: &str| bearer.admits(Some(&HeaderValue::from_str(value).unwrap()));
        assert!(admits("Bearer s3cret"));
        assert!(admits("bearer s3cret"));
        assert!(!admits("Bearer s3cre"));
        assert!(!admits("Bearer s3cret2"));
        assert!(!admits("Basic s3cret"));
        assert!(!admits("s3cret"));
        assert!(!bearer.admits(None));
        let accented = Bearer::new("s\u{e9}cret");
        let value = HeaderValue::from_bytes("Bearer s\u{e9}cret".as_bytes()).unwrap();
        assert!(accented.admits(Some(&value)));
    }
}
