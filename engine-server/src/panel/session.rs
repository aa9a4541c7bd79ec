//! Who may use the panel and the routes beside it, and how a browser proves it: the
//! server's token once, at the login form, then a session cookie (`HttpOnly`,
//! `SameSite=Strict`); a write a session makes carries the session's CSRF token. A
//! script sends the token as `Authorization: Bearer` on every request and needs no CSRF
//! token (nothing sends it for a page another site shows). On loopback without a token
//! every request is served, as `/mcp` is, and a browser that opens a page gets a session
//! all the same, so that its forms carry a CSRF token.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, Request};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use sha2::{Digest, Sha256};

use crate::bearer::Bearer;
use crate::cookies::{cookie, set_cookie};
use crate::ids::random_hex;

/// The session cookie's name, before the server's port: cookies do not tell ports apart,
/// so two engines on one host keep a session each.
const COOKIE: &str = "engine_session_";
/// The header a script or the panel's JavaScript sends the CSRF token in.
pub(crate) const CSRF_HEADER: &str = "x-csrf-token";
/// The form field a page's form sends it in.
pub(crate) const CSRF_FIELD: &str = "csrf";
/// A session unused this long ends.
const IDLE: Duration = Duration::from_secs(12 * 3600);
/// The most sessions kept: one more ends the least recently used.
const MAX_SESSIONS: usize = 1024;

/// A signed-in browser, as a handler sees it (a request extension).
#[derive(Clone, Debug)]
pub(crate) struct Session {
    /// What identifies it in the store: the SHA-256 of the cookie's value.
    key: [u8; 32],
    /// The token every write it makes must carry.
    pub(crate) csrf: Arc<str>,
}

struct Entry {
    csrf: Arc<str>,
    used: Instant,
    /// What the next page shows once: a write's outcome, after a form's redirect.
    flash: Option<String>,
}

/// The most a flash message keeps: it may echo what a request sent.
const MAX_FLASH_BYTES: usize = 1024;

/// The sessions of this process (a replica's browser signs in to it again).
pub(crate) struct Sessions {
    entries: Mutex<HashMap<[u8; 32], Entry>>,
    /// The cookie's name, for the server's port.
    pub(crate) cookie: String,
}

/// A request admitted by the token (a request extension): a script's, which needs no
/// CSRF token.
#[derive(Clone, Copy)]
pub(crate) struct ByToken;

impl Sessions {
    /// The sessions of the server listening on `port`.
    pub(crate) fn new(port: u16) -> Self {
        Self {
            entries: Mutex::default(),
            cookie: format!("{COOKIE}{port}"),
        }
    }

    /// A new session: its cookie's value and what handlers see.
    pub(crate) fn start(&self) -> (String, Session) {
        let id = random_hex(32);
        let key: [u8; 32] = Sha256::digest(id.as_bytes()).into();
        let csrf: Arc<str> = random_hex(32).into();
        let mut entries = self.entries.lock().expect("the sessions' lock");
        let now = Instant::now();
        entries.retain(|_, entry| now.duration_since(entry.used) < IDLE);
        if entries.len() >= MAX_SESSIONS {
            if let Some(oldest) = entries
                .iter()
                .min_by_key(|(_, entry)| entry.used)
                .map(|(key, _)| *key)
            {
                entries.remove(&oldest);
            }
        }
        entries.insert(
            key,
            Entry {
                csrf: Arc::clone(&csrf),
                used: now,
                flash: None,
            },
        );
        (id, Session { key, csrf })
    }

    /// The session the request's cookie names, if it is one and has not ended.
    pub(crate) fn find(&self, headers: &HeaderMap) -> Option<Session> {
        let id = cookie(headers, &self.cookie)?;
        let key: [u8; 32] = Sha256::digest(id.as_bytes()).into();
        let mut entries = self.entries.lock().expect("the sessions' lock");
        let entry = entries.get_mut(&key)?;
        let now = Instant::now();
        if now.duration_since(entry.used) >= IDLE {
            entries.remove(&key);
            return None;
        }
        entry.used = now;
        Some(Session {
            key,
            csrf: Arc::clone(&entry.csrf),
        })
    }

    pub(crate) fn end(&self, session: &Session) {
        self.entries
            .lock()
            .expect("the sessions' lock")
            .remove(&session.key);
    }

    /// Keeps `message` for `session`'s next page (its first kilobyte).
    pub(crate) fn flash(&self, session: &Session, mut message: String) {
        if message.len() > MAX_FLASH_BYTES {
            let mut end = MAX_FLASH_BYTES;
            while !message.is_char_boundary(end) {
                end -= 1;
            }
            message.truncate(end);
            message.push('…');
        }
        if let Some(entry) = self
            .entries
            .lock()
            .expect("the sessions' lock")
            .get_mut(&session.key)
        {
            entry.flash = Some(message);
        }
    }

    /// The message kept for `session`'s next page, taken.
    pub(crate) fn take_flash(&self, session: &Session) -> Option<String> {
        self.entries
            .lock()
            .expect("the sessions' lock")
            .get_mut(&session.key)?
            .flash
            .take()
    }
}

/// The guard of every route behind the token (the panel, the admin API, `/v1`,
/// `/channels`, `/mcp`).
#[derive(Clone)]
pub(crate) struct Guard {
    pub(crate) bearer: Option<Bearer>,
    pub(crate) sessions: Arc<Sessions>,
}

impl Guard {
    /// Admits a request with the token, or with a session; without a token configured,
    /// every request, and a page's with a new session when it has none. A browser
    /// without a session is sent to the login form; anything else answered 401.
    pub(crate) async fn admit(self, mut request: Request, next: Next) -> Response {
        if let Some(bearer) = &self.bearer {
            if bearer.admits(request.headers().get(header::AUTHORIZATION)) {
                request.extensions_mut().insert(ByToken);
                return next.run(request).await;
            }
        }
        // A session is the panel's: it opens the pages and the `/v1` API, never `/mcp`
        // (whose clients hold the token).
        let session = (!request.uri().path().starts_with("/mcp"))
            .then(|| self.sessions.find(request.headers()))
            .flatten();
        if let Some(session) = session {
            request.extensions_mut().insert(session);
            return next.run(request).await;
        }
        let page = is_page(&request);
        match &self.bearer {
            None if page => {
                let (id, session) = self.sessions.start();
                let cookie = set_cookie(request.headers(), &self.sessions.cookie, &id, None);
                request.extensions_mut().insert(session);
                let mut response = next.run(request).await;
                response.headers_mut().append(header::SET_COOKIE, cookie);
                response
            }
            None => next.run(request).await,
            Some(_) if page => {
                let back = request
                    .uri()
                    .path_and_query()
                    .map_or("/", |path| path.as_str());
                let query =
                    serde_urlencoded::to_string([("next", back)]).expect("a query of one string");
                Redirect::to(&format!("/login?{query}")).into_response()
            }
            Some(bearer) => bearer.refusal(),
        }
    }
}

/// Whether `request` is a browser's navigation to a page: a `GET` that asks for HTML
/// and is not the API's.
fn is_page(request: &Request) -> bool {
    request.method() == Method::GET
        && !request.uri().path().starts_with("/v1/")
        && !request.uri().path().starts_with("/mcp")
        && request
            .headers()
            .get(header::ACCEPT)
            .and_then(|accept| accept.to_str().ok())
            .is_some_and(|accept| accept.contains("text/html"))
}

/// Refuses a write a session makes without its CSRF token: in the `x-csrf-token`
/// header, or the `csrf` field of a form (read from the body, which the body's deadline
/// has read whole already). Requests admitted by the token, or without a session,
/// pass.
pub(crate) async fn check_csrf(request: Request, next: Next) -> Response {
    if is_safe(request.method()) || request.extensions().get::<ByToken>().is_some() {
        return next.run(request).await;
    }
    let Some(session) = request.extensions().get::<Session>().cloned() else {
        // No token configured, and no session: a script on this machine, as `/mcp`
        // serves one. A browser sends `Origin`: a page of another local port has no
        // business changing the configuration or the knowledge without the panel's
        // session.
        let admin = request.uri().path().starts_with("/v1/admin/");
        if admin && request.headers().contains_key(header::ORIGIN) {
            return csrf_refused();
        }
        return next.run(request).await;
    };
    match checked_csrf(&session, request).await {
        Ok(request) => next.run(request).await,
        Err(refused) => refused,
    }
}

fn is_safe(method: &Method) -> bool {
    matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// `request`, a write of `session`, when it carries the session's CSRF token (its body
/// read, and given back); else the 403 that says so.
pub(crate) async fn checked_csrf(session: &Session, request: Request) -> Result<Request, Response> {
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return Err(csrf_refused());
    };
    if !carries_csrf(session, &parts.headers, &bytes).await {
        return Err(csrf_refused());
    }
    Ok(Request::from_parts(parts, Body::from(bytes)))
}

/// Whether a write of `session` carries its CSRF token: in the `x-csrf-token` header,
/// else in the `csrf` field of its form.
async fn carries_csrf(session: &Session, headers: &HeaderMap, body: &Bytes) -> bool {
    let matches = |token: &str| {
        use subtle::ConstantTimeEq;
        bool::from(token.as_bytes().ct_eq(session.csrf.as_bytes()))
    };
    if let Some(token) = headers.get(CSRF_HEADER) {
        return token.to_str().is_ok_and(matches);
    }
    form_field(headers, body, CSRF_FIELD)
        .await
        .as_deref()
        .is_some_and(matches)
}

fn csrf_refused() -> Response {
    crate::problem::problem(
        StatusCode::FORBIDDEN,
        "this write needs the session's CSRF token (the `x-csrf-token` header, or the form's `csrf` field): reload the page and try again",
    )
}

/// The text of the field `name` of a form body: URL-encoded or multipart.
async fn form_field(headers: &HeaderMap, bytes: &Bytes, name: &str) -> Option<String> {
    let content_type = headers.get(header::CONTENT_TYPE)?.to_str().ok()?;
    if content_type.starts_with("application/x-www-form-urlencoded") {
        return form_urlencoded(bytes, name);
    }
    if content_type.starts_with("multipart/form-data") {
        let request = Request::builder()
            .header(header::CONTENT_TYPE, content_type)
            .body(Body::from(bytes.clone()))
            .ok()?;
        let mut multipart = axum::extract::Multipart::from_request(request, &())
            .await
            .ok()?;
        while let Ok(Some(field)) = multipart.next_field().await {
            if field.name() == Some(name) {
                return field.text().await.ok();
            }
        }
    }
    None
}

fn form_urlencoded(bytes: &[u8], name: &str) -> Option<String> {
    serde_urlencoded::from_bytes::<Vec<(String, String)>>(bytes)
        .ok()?
        .into_iter()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn a_session_is_found_by_its_cookie_and_ends() {
        let sessions = Sessions::new(8080);
        let (id, session) = sessions.start();
        let mut headers = HeaderMap::new();
        headers.insert(
            header::COOKIE,
            HeaderValue::from_str(&format!("other=1; {COOKIE}8080={id}")).unwrap(),
        );
        let mut other_port = HeaderMap::new();
        other_port.insert(
            header::COOKIE,
            HeaderValue::from_str(&format!("{COOKIE}8081={id}")).unwrap(),
        );
        assert!(sessions.find(&other_port).is_none());
        let found = sessions.find(&headers).expect("the session");
        assert_eq!(found.csrf, session.csrf);
        sessions.flash(&found, "done".into());
        assert_eq!(sessions.take_flash(&found).as_deref(), Some("done"));
        sessions.flash(&found, "é".repeat(MAX_FLASH_BYTES));
        let long = sessions.take_flash(&found).unwrap();
        assert!(long.len() <= MAX_FLASH_BYTES + '…'.len_utf8() && long.ends_with('…'));
        assert_eq!(sessions.take_flash(&found), None);
        sessions.end(&found);
        assert!(sessions.find(&headers).is_none());
        let mut forged = HeaderMap::new();
        forged.insert(
            header::COOKIE,
            HeaderValue::from_str(&format!("{COOKIE}8080={}", random_hex(32))).unwrap(),
        );
        assert!(sessions.find(&forged).is_none());
    }

    #[test]
    fn sessions_past_the_bound_end_the_least_recently_used() {
        let sessions = Sessions::new(8080);
        let with_cookie = |id: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(
                header::COOKIE,
                HeaderValue::from_str(&format!("{COOKIE}8080={id}")).unwrap(),
            );
            headers
        };
        // The first started, then used after the second: the second is the least
        // recently used (the pauses keep the instants apart on any clock).
        let (first, _) = sessions.start();
        std::thread::sleep(Duration::from_millis(2));
        let (second, _) = sessions.start();
        std::thread::sleep(Duration::from_millis(2));
        assert!(sessions.find(&with_cookie(&first)).is_some());
        std::thread::sleep(Duration::from_millis(2));
        for _ in 0..MAX_SESSIONS - 1 {
            sessions.start();
        }
        assert_eq!(sessions.entries.lock().unwrap().len(), MAX_SESSIONS);
        assert!(sessions.find(&with_cookie(&second)).is_none());
        assert!(sessions.find(&with_cookie(&first)).is_some());
    }
}
