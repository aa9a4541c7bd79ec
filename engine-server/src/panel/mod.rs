//! The web panel `engine serve` offers at `/`, for the people who run the engine, and the
//! JSON admin API under `/v1/admin` it is built on (a script can use it too: see
//! `docs/admin-api.md`). Pages are rendered by the server from the same views the API
//! answers ([`views`]), usable without JavaScript except where a reply streams; writes
//! go to the admin API, which answers a form with a redirect back to its page and JSON
//! with JSON. Guards: [`session`] (the token's login, the session cookie, the CSRF
//! token) inside the server's `Host`/`Origin` checks.

mod admin;
mod assets;
mod config_edit;
mod configuration;
mod locale;
mod pages;
pub(crate) mod session;
mod views;

pub use configuration::Configuration;

use std::sync::Arc;

use axum::Router;
use engine_core::Engine;

use crate::bearer::Bearer;
use session::Sessions;

/// What the panel's routes share.
#[derive(Clone)]
pub(crate) struct Panel {
    pub(crate) engine: Arc<Engine>,
    /// The configuration the panel changes (its tool switches write the file, its
    /// secrets page sets secrets), when the engine was started from a file.
    pub(crate) configuration: Option<Arc<dyn Configuration>>,
    pub(crate) sessions: Arc<Sessions>,
}

/// The guarded routes: the pages and the admin API.
pub(crate) fn router(panel: Panel) -> Router {
    pages::router().merge(admin::router()).with_state(panel)
}

/// The routes open to anyone who passes the `Host`/`Origin` checks: the login form and
/// the embedded assets (a login page needs its stylesheet).
pub(crate) fn open_router(sessions: Arc<Sessions>, bearer: Option<Bearer>) -> Router {
    pages::login::router(sessions, bearer).merge(assets::router())
}

/// `path` when it is a path of this site (where a form or a login goes next), else the
/// panel's home: never another site's (`//host`, `/\\host`, `https://host`), and
/// printable ASCII only (a browser drops a tab or a newline, making `/\t/host` another
/// site's).
pub(crate) fn local_path(path: Option<&str>) -> &str {
    match path {
        Some(path)
            if path.starts_with('/')
                && !path.starts_with("//")
                && path
                    .bytes()
                    .all(|byte| byte.is_ascii_graphic() && byte != b'\\') =>
        {
            path
        }
        _ => "/",
    }
}

/// `text` as one path segment (an agent's name, a tool's id).
pub(crate) fn segment(text: &str) -> String {
    percent_encoding::utf8_percent_encode(text, percent_encoding::NON_ALPHANUMERIC).to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_a_path_of_this_site_is_where_a_form_or_a_login_goes_next() {
        assert_eq!(
            super::local_path(Some("/agents/bot/tools?x=1")),
            "/agents/bot/tools?x=1"
        );
        for other in [
            "//evil.example/",
            "https://evil.example/",
            "/\\evil.example",
            "/\t/evil.example",
            "/\n/evil.example",
            "/ /evil.example",
            "/caf\u{e9}",
            "evil",
        ] {
            assert_eq!(super::local_path(Some(other)), "/", "{other}");
        }
        assert_eq!(super::local_path(None), "/");
    }
}
