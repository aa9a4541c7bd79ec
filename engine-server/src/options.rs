//! Who may use the HTTP server and how much it serves at once ([`HttpOptions`]), checked
//! before it listens; and why it would not ([`HttpError`]).

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use axum::http::uri::Authority;
use axum::http::Uri;

use crate::bearer;

/// The environment variable an engine reads the server's token from (engine-cli does,
/// and removes it from its environment once read).
pub const TOKEN_ENV: &str = "ENGINE_MCP_TOKEN";

/// The browser origins always allowed: pages served from this machine.
pub(crate) const LOOPBACK_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "http://127.0.0.1:*",
    "http://[::1]:*",
    "https://localhost:*",
    "https://127.0.0.1:*",
    "https://[::1]:*",
];

/// The `Host`s always allowed (rmcp's guard against DNS rebinding).
pub(crate) const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// Who may use the HTTP server, and how much it serves at once.
#[derive(Clone)]
pub struct HttpOptions {
    /// The token every request must carry as `Authorization: Bearer <token>` (compared in
    /// constant time; 401 otherwise): at least 32 bytes, without whitespace or control
    /// characters. Required to listen on an address other hosts can reach, or to allow a
    /// host or origin that is not loopback; an empty token is no token.
    pub token: Option<String>,
    /// Browser origins allowed besides the loopback ones, as `scheme://host:port` (`:*`
    /// for any port). A request whose `Origin` is none of them is answered 403; a request
    /// without `Origin` (not from a browser) passes.
    pub allowed_origins: Vec<String>,
    /// Names (or `name:port`) clients reach the server by, besides the loopback ones; a
    /// request for another `Host` is answered 403.
    pub allowed_hosts: Vec<String>,
    /// The most requests served at once (at least 1); one more is answered 503 at once,
    /// never queued.
    pub max_in_flight: usize,
    /// The most connections open at once (at least 1); one more is answered 503 and closed.
    pub max_connections: usize,
    /// How long a client has to send a request's head, on a new connection or on an idle
    /// keep-alive one; then the connection is closed.
    pub header_read_timeout: Duration,
    /// How long a client has to send a request's body once its head arrived; then the
    /// request is answered 408 and gives its place in flight back.
    pub body_read_timeout: Duration,
    /// The dev tokens dev sessions are opened with (`engine dev-token`); none: dev mode
    /// is off.
    pub dev_tokens: Option<crate::DevTokens>,
    /// The configuration the panel changes (its tool switches write the file, its secrets
    /// page sets secrets); none: neither is offered.
    pub configuration: Option<std::sync::Arc<dyn crate::Configuration>>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            token: None,
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            max_in_flight: 64,
            max_connections: 256,
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(10),
            dev_tokens: None,
            configuration: None,
        }
    }
}

impl HttpOptions {
    /// Whether these options may serve on `addr`: the limits are usable, every allowed
    /// origin and host parses, the token (if any) is strong enough, and there is one if
    /// other hosts can reach the server: `addr` is not loopback, or an allowed origin or
    /// host is not (the server is then exposed through a proxy). [`serve`](crate::serve) checks it;
    /// a caller that announces the address checks first.
    pub fn check(&self, addr: SocketAddr) -> Result<(), HttpError> {
        for (name, value) in [
            ("max_in_flight", self.max_in_flight),
            ("max_connections", self.max_connections),
        ] {
            if value == 0 {
                return Err(HttpError::Invalid(format!(
                    "{name} is 0, so every request would be refused: set it to at least 1"
                )));
            }
        }
        for (name, value) in [
            ("header_read_timeout", self.header_read_timeout),
            ("body_read_timeout", self.body_read_timeout),
        ] {
            if value.is_zero() {
                return Err(HttpError::Invalid(format!(
                    "{name} is 0, so no request could arrive in time: set it to a few seconds"
                )));
            }
        }
        let mut exposed_by = None;
        for origin in &self.allowed_origins {
            let Some(host) = origin_host(origin) else {
                return Err(HttpError::Invalid(format!(
                    "the allowed origin `{origin}` does not parse: write it as \
                     `scheme://host:port`, such as `https://app.example.com:443` (`:*` for any port)"
                )));
            };
            if !is_loopback(&host) {
                exposed_by.get_or_insert(origin);
            }
        }
        for allowed in &self.allowed_hosts {
            let Some(host) = host_name(allowed) else {
                return Err(HttpError::Invalid(format!(
                    "the allowed host `{allowed}` does not parse: write it as `name` or \
                     `name:port`, such as `mcp.example.com` or `mcp.example.com:443`"
                )));
            };
            if !is_loopback(&host) {
                exposed_by.get_or_insert(allowed);
            }
        }
        match self.token() {
            Some(token) => match bearer::weakness(token) {
                Some(weakness) => Err(HttpError::WeakToken { weakness }),
                None => Ok(()),
            },
            None if !addr.ip().to_canonical().is_loopback() => Err(HttpError::NoToken { addr }),
            None => match exposed_by {
                Some(allowed) => Err(HttpError::NoTokenBehindProxy {
                    allowed: allowed.clone(),
                }),
                None => Ok(()),
            },
        }
    }

    pub(crate) fn token(&self) -> Option<&str> {
        self.token.as_deref().filter(|token| !token.is_empty())
    }
}

/// The host of an allowed origin (`scheme://host[:port|:*]`, as rmcp reads it), or `None`
/// if it does not parse; `null` (sandboxed pages) has no host, so an empty one.
fn origin_host(origin: &str) -> Option<String> {
    if origin.eq_ignore_ascii_case("null") {
        return Some(String::new());
    }
    let uri = Uri::try_from(origin.strip_suffix(":*").unwrap_or(origin)).ok()?;
    let bare = matches!(uri.scheme_str(), Some("http" | "https"))
        && matches!(uri.path(), "" | "/")
        && uri.query().is_none();
    let authority = uri.authority().filter(|_| bare)?;
    Some(authority.host().to_owned())
}

/// The name in an allowed host (`name`, `name:port`, or an IPv6 address with or without
/// brackets), or `None` if it does not parse.
fn host_name(allowed: &str) -> Option<String> {
    if allowed.parse::<IpAddr>().is_ok() {
        return Some(allowed.to_owned());
    }
    let authority = Authority::try_from(allowed).ok()?;
    let host = authority.host();
    // `http` takes `name:port` with any text for the port, and a user part.
    let port_ok = host.len() == allowed.len() || authority.port_u16().is_some();
    (!host.is_empty() && port_ok && !allowed.contains('@')).then(|| host.to_owned())
}

/// Whether `host` names this machine only.
fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<IpAddr>()
            .is_ok_and(|ip| ip.to_canonical().is_loopback())
}

impl std::fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpOptions")
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field("allowed_origins", &self.allowed_origins)
            .field("allowed_hosts", &self.allowed_hosts)
            .field("max_in_flight", &self.max_in_flight)
            .field("max_connections", &self.max_connections)
            .field("header_read_timeout", &self.header_read_timeout)
            .field("body_read_timeout", &self.body_read_timeout)
            .field("dev_tokens", &self.dev_tokens)
            .field("configuration", &self.configuration.is_some())
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
         Set {TOKEN_ENV} to a secret (make one with `openssl rand -hex 32`; clients then send \
         `Authorization: Bearer <token>`), or listen on a loopback address such as 127.0.0.1:{port}",
        port = .addr.port()
    )]
    NoToken {
        /// The address listened on.
        addr: SocketAddr,
    },
    /// An allowed host or origin is not loopback (clients reach the server through a
    /// proxy), and there is no token.
    #[error(
        "refusing to serve MCP for `{allowed}` without a token: clients on other hosts reach \
         the server that way, through a proxy. Set {TOKEN_ENV} to a secret (make one with \
         `openssl rand -hex 32`), or allow only loopback hosts and origins"
    )]
    NoTokenBehindProxy {
        /// The first allowed host or origin that is not loopback.
        allowed: String,
    },
    /// The token is too easy to guess or to mangle.
    #[error(
        "the MCP token {weakness}: set {TOKEN_ENV} to at least 32 bytes without whitespace \
         or control characters, such as what `openssl rand -hex 32` prints"
    )]
    WeakToken {
        /// What is wrong with it.
        weakness: &'static str,
    },
    /// An option cannot work; the message says which and how to fix it.
    #[error("{0}")]
    Invalid(String),
    /// The listener failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOOPBACK: &str = "127.0.0.1:8080";
    const TOKEN: &str = "0123456789abcdef0123456789abcdef";

    fn check(options: HttpOptions, addr: &str) -> Result<(), String> {
        options
            .check(addr.parse().unwrap())
            .map_err(|error| error.to_string())
    }

    #[test]
    fn a_host_or_origin_that_is_not_loopback_needs_a_token() {
        let hosts = |hosts: &[&str]| HttpOptions {
            allowed_hosts: hosts.iter().map(|host| host.to_string()).collect(),
            ..HttpOptions::default()
        };
        let origins = |origins: &[&str]| HttpOptions {
            allowed_origins: origins.iter().map(|origin| origin.to_string()).collect(),
            ..HttpOptions::default()
        };
        for loopback in [
            hosts(&["localhost:8080", "127.0.0.2", "::1", "[::1]:80"]),
            origins(&["http://localhost:5173", "https://[::1]:*"]),
        ] {
            assert_eq!(check(loopback, LOOPBACK), Ok(()));
        }
        for (exposed, named) in [
            (hosts(&["localhost", "mcp.example.com"]), "mcp.example.com"),
            (hosts(&["10.0.0.5:443"]), "10.0.0.5:443"),
            (
                origins(&["https://app.example.com:443"]),
                "https://app.example.com:443",
            ),
            (origins(&["null"]), "null"),
        ] {
            let error = check(exposed.clone(), LOOPBACK).unwrap_err();
            assert!(
                error.contains(&format!(
                    "refusing to serve MCP for `{named}` without a token"
                )) && error.contains("Set ENGINE_MCP_TOKEN")
                    && error.contains("or allow only loopback hosts and origins"),
                "{error}"
            );
            let with_token = HttpOptions {
                token: Some(TOKEN.into()),
                ..exposed
            };
            assert_eq!(check(with_token, LOOPBACK), Ok(()));
        }
    }

    #[test]
    fn an_allowed_origin_or_host_that_does_not_parse_is_refused_with_its_form() {
        for origin in [
            "app.example.com",
            "ftp://app.example.com",
            "https://app.example.com/path",
            "https://",
        ] {
            let options = HttpOptions {
                allowed_origins: vec![origin.into()],
                ..HttpOptions::default()
            };
            let error = check(options, LOOPBACK).unwrap_err();
            assert!(
                error.contains(&format!("the allowed origin `{origin}` does not parse"))
                    && error.contains("write it as `scheme://host:port`"),
                "{error}"
            );
        }
        for host in [
            "",
            "mcp.example.com/mcp",
            "user@mcp.example.com",
            "mcp.example.com:port",
        ] {
            let options = HttpOptions {
                allowed_hosts: vec![host.into()],
                ..HttpOptions::default()
            };
            let error = check(options, LOOPBACK).unwrap_err();
            assert!(
                error.contains(&format!("the allowed host `{host}` does not parse"))
                    && error.contains("write it as `name` or `name:port`"),
                "{error}"
            );
        }
    }

    #[test]
    fn zero_limits_are_refused_with_the_fix() {
        for (options, name) in [
            (
                HttpOptions {
                    max_in_flight: 0,
                    ..HttpOptions::default()
                },
                "max_in_flight",
            ),
            (
                HttpOptions {
                    max_connections: 0,
                    ..HttpOptions::default()
                },
                "max_connections",
            ),
        ] {
            let error = check(options, LOOPBACK).unwrap_err();
            assert!(
                error.contains(&format!("{name} is 0")) && error.contains("set it to at least 1"),
                "{error}"
            );
        }
        for (options, name) in [
            (
                HttpOptions {
                    header_read_timeout: Duration::ZERO,
                    ..HttpOptions::default()
                },
                "header_read_timeout",
            ),
            (
                HttpOptions {
                    body_read_timeout: Duration::ZERO,
                    ..HttpOptions::default()
                },
                "body_read_timeout",
            ),
        ] {
            let error = check(options, LOOPBACK).unwrap_err();
            assert!(
                error.contains(&format!("{name} is 0"))
                    && error.contains("set it to a few seconds"),
                "{error}"
            );
        }
    }

    #[test]
    fn a_weak_token_is_refused_with_how_to_make_one() {
        for token in ["short", "0123456789abcdef 0123456789abcdef"] {
            let options = HttpOptions {
                token: Some(token.into()),
                ..HttpOptions::default()
            };
            let error = check(options, "0.0.0.0:8080").unwrap_err();
            assert!(
                error.starts_with("the MCP token ") && error.contains("openssl rand -hex 32"),
                "{error}"
            );
        }
    }
}
