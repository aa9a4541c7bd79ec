//! The engine's HTTP server: an agent's MCP at `/mcp` (engine-mcp's router), its turns at
//! `/v1` (`POST /v1/agents/{agent}/turns` answers the turn's events as NDJSON,
//! `GET /v1/conversations/{id}` a conversation's history: engine-core's guide, `engine_core::guide`),
//! the channels at `/channels/{name}`, the external tools' status, and the web panel at `/`
//! on its JSON admin API under `/v1/admin` ([`admin_api`]), all behind one set of guards
//! ([`HttpOptions`]): a bearer token, required when other hosts can reach the server,
//! directly or through a proxy (a browser signs in with it for a panel session),
//! `Origin` and `Host` checks, a bound on the
//! connections open and on the requests served at once, and deadlines for a request's
//! head and body, so that slow clients cannot hold the server.
//!
//! ```no_run
//! # async fn run(engine: std::sync::Arc<engine_core::Engine>) -> Result<(), Box<dyn std::error::Error>> {
//! use engine_mcp::{McpServer, Options};
//! use engine_server::HttpOptions;
//!
//! let server = McpServer::new(engine, "default", Options::default())?;
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! let shutdown = tokio_util::sync::CancellationToken::new();
//! engine_server::serve(server, listener, HttpOptions::default(), shutdown).await?;
//! # Ok(()) }
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

#[doc = include_str!("../docs/admin-api.md")]
pub mod admin_api {}

mod bearer;
mod body_deadline;
mod channels;
mod connections;
mod cookies;
mod dev;
mod extensions;
mod ids;
mod in_flight;
mod oauth;
mod options;
mod panel;
mod problem;
mod rojo;
mod same_site;
mod turns;

pub use dev::tokens::{self as dev_tokens, DevTokens};
pub use options::{HttpError, HttpOptions, TOKEN_ENV};
pub use panel::Configuration;

use std::sync::Arc;

use engine_mcp::streamable_http::{self, HttpTransport};
use engine_mcp::McpServer;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use bearer::Bearer;
use options::{LOOPBACK_HOSTS, LOOPBACK_ORIGINS};
use panel::session::{self as sessions, Guard, Sessions};

/// The most a request to an open route (the login form) may send.
const OPEN_BODY_BYTES: usize = 16 * 1024;

/// Serves `server`'s MCP at `/mcp`, and its engine's turns, channels, external tools'
/// status and web panel (see the crate's documentation), on `listener`, guarded as `options` say, until
/// `shutdown` is cancelled. Refuses to start on options that [`HttpOptions::check`]
/// refuses.
pub async fn serve(
    server: McpServer,
    listener: TcpListener,
    options: HttpOptions,
    shutdown: CancellationToken,
) -> Result<(), HttpError> {
    let addr = listener.local_addr()?;
    options.check(addr)?;
    let bearer = options.token().map(Bearer::new);
    // One list for rmcp's checks of `/mcp` and ours of the other routes.
    let same_site = same_site::SameSite {
        hosts: LOOPBACK_HOSTS
            .iter()
            .map(|host| host.to_string())
            .chain(options.allowed_hosts)
            .collect(),
        origins: LOOPBACK_ORIGINS
            .iter()
            .map(|origin| origin.to_string())
            .chain(options.allowed_origins)
            .collect(),
    };
    let body_timeout = options.body_read_timeout;
    let max_body_bytes = streamable_http::max_request_body_bytes();
    let engine = Arc::clone(server.engine());
    let mcp = streamable_http::router(
        server,
        HttpTransport {
            allowed_hosts: same_site.hosts.clone(),
            allowed_origins: same_site.origins.clone(),
            shutdown: shutdown.child_token(),
        },
    );
    let dev = dev::router(
        Arc::clone(&engine),
        options.dev_tokens,
        shutdown.child_token(),
    );
    let oauth = oauth::router(Arc::clone(&engine));
    let sessions = Arc::new(Sessions::new(addr.port()));
    let guard = Guard {
        bearer: bearer.clone(),
        sessions: Arc::clone(&sessions),
    };
    let panel = panel::router(panel::Panel {
        engine: Arc::clone(&engine),
        configuration: options.configuration,
        sessions: Arc::clone(&sessions),
    });
    // The login form's body is small, and read by a deadline like every other: a slow
    // one cannot hold a connection before anyone signed in.
    let open = panel::open_router(sessions, bearer).layer(axum::middleware::from_fn(
        move |request, next| body_deadline::read_body(body_timeout, OPEN_BODY_BYTES, request, next),
    ));
    let permits = Arc::new(Semaphore::new(options.max_in_flight));
    let router = mcp
        .merge(
            turns::router(Arc::clone(&engine), shutdown.child_token())
                .merge(channels::router(
                    Arc::clone(&engine),
                    shutdown.child_token(),
                ))
                .merge(extensions::router(engine))
                .merge(panel),
        )
        // Inside the body's deadline, which has read the body whole: a form's CSRF
        // token is one of its fields.
        .layer(axum::middleware::from_fn(sessions::check_csrf))
        // Inside the in-flight bound: a slow body holds its place until the deadline only.
        .layer(axum::middleware::from_fn(move |request, next| {
            body_deadline::read_body(body_timeout, max_body_bytes, request, next)
        }))
        .layer(axum::middleware::from_fn(move |request, next| {
            in_flight::bounded(Arc::clone(&permits), request, next)
        }));
    // The last layer is the outermost: a request without the token (or a panel
    // session) takes no permit.
    let router = router.layer(axum::middleware::from_fn(
        move |request: axum::extract::Request, next: axum::middleware::Next| {
            guard.clone().admit(request, next)
        },
    ));
    // A dev session is opened with its agent's dev token, never the engine's (which an
    // author should not hold), the OAuth routes by a person's browser, which holds
    // none, and the panel's login form is how a browser gets a session: outside the
    // guard, so merged after it.
    let router = router.merge(dev.merge(oauth).merge(open));
    // `Host` and `Origin` first of all, on every route: a page of another site gets
    // nothing, not even a session. `/mcp` is rmcp's to check, as it always was (it reads
    // allowed origins its own way).
    let router = router.layer(axum::middleware::from_fn(
        move |request: axum::extract::Request, next: axum::middleware::Next| {
            let same_site = same_site.clone();
            async move {
                if request.uri().path().starts_with("/mcp") {
                    next.run(request).await
                } else {
                    same_site.check(request, next).await
                }
            }
        },
    ));
    connections::serve(
        listener,
        router,
        options.max_connections,
        options.header_read_timeout,
        shutdown,
    )
    .await;
    Ok(())
}
