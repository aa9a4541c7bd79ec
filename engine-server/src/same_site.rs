//! The `Host` and `Origin` checks rmcp applies to `/mcp`, for the routes beside it: a
//! web page cannot make a browser drive the engine (DNS rebinding, cross-site requests),
//! even on loopback without a token.

use axum::extract::Request;
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// Who may be named in `Host`, and which pages may send requests (`Origin`).
#[derive(Clone, Debug)]
pub(super) struct SameSite {
    /// Host names, or `host:port`.
    pub(super) hosts: Vec<String>,
    /// `scheme://host[:port]`, a port of `*` for any.
    pub(super) origins: Vec<String>,
}

impl SameSite {
    /// Refuses a request whose `Host` is not allowed, or whose `Origin` (sent by browsers)
    /// is not; passes every other one on.
    pub(super) async fn check(self, request: Request, next: Next) -> Response {
        if let Err(refused) = self.refusal(&request) {
            return (StatusCode::FORBIDDEN, refused).into_response();
        }
        next.run(request).await
    }

    /// Why `request` is refused, if it is.
    fn refusal(&self, request: &Request) -> Result<(), &'static str> {
        let text = |name| {
            request
                .headers()
                .get(name)
                .and_then(|value| value.to_str().ok())
        };
        if !text(header::HOST).is_some_and(|host| self.host_allowed(host)) {
            return Err("this Host is not served");
        }
        if text(header::ORIGIN).is_some_and(|origin| !self.origin_allowed(origin)) {
            return Err("requests from this Origin are not served");
        }
        Ok(())
    }

    fn host_allowed(&self, host: &str) -> bool {
        let name = host_name(host);
        self.hosts
            .iter()
            .any(|allowed| allowed == host || allowed == name)
    }

    fn origin_allowed(&self, origin: &str) -> bool {
        self.origins
            .iter()
            .any(|allowed| match allowed.strip_suffix(":*") {
                Some(any_port) => {
                    origin == any_port
                        || origin
                            .strip_prefix(any_port)
                            .and_then(|rest| rest.strip_prefix(':'))
                            .is_some_and(|port| {
                                !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit())
                            })
                }
                None => allowed == origin,
            })
    }
}

/// `host` without its port: `[::1]:8080` is `::1`, `localhost:8080` is `localhost`.
fn host_name(host: &str) -> &str {
    if let Some(bracketed) = host.strip_prefix('[') {
        return bracketed.split(']').next().unwrap_or(bracketed);
    }
    match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loopback() -> SameSite {
        SameSite {
            hosts: vec![
                "localhost".into(),
                "127.0.0.1".into(),
                "::1".into(),
                "api.example.com:8443".into(),
            ],
            origins: vec![
                "http://localhost:*".into(),
                "https://app.example.com".into(),
            ],
        }
    }

    #[test]
    fn hosts_are_matched_by_name_or_by_name_and_port() {
        let site = loopback();
        for host in [
            "localhost",
            "localhost:8080",
            "127.0.0.1:9",
            "[::1]:8080",
            "api.example.com:8443",
        ] {
            assert!(site.host_allowed(host), "{host}");
        }
        for host in [
            "evil.example",
            "evil.example:8080",
            "api.example.com",
            "localhost.evil:80",
            "[::2]:8080",
        ] {
            assert!(!site.host_allowed(host), "{host}");
        }
    }

    #[test]
    fn origins_are_matched_exactly_or_with_any_port() {
        let site = loopback();
        for origin in [
            "http://localhost",
            "http://localhost:3000",
            "https://app.example.com",
        ] {
            assert!(site.origin_allowed(origin), "{origin}");
        }
        for origin in [
            "http://localhost.evil",
            "http://localhost:3000x",
            "https://app.example.com:444",
            "null",
            "http://evil.example",
        ] {
            assert!(!site.origin_allowed(origin), "{origin}");
        }
    }
}
