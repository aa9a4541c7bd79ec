//! The cookies the server reads and sets: the panel's session and language, the OAuth
//! broker's sign-in.

use axum::http::{header, HeaderMap, HeaderValue};

/// The value of the cookie `name` in `headers`.
pub(crate) fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value)
}

/// A cookie of the panel's: `HttpOnly`, `SameSite=Strict`, for the whole site; `Secure`
/// when the request came over https (through a proxy that says so).
pub(crate) fn set_cookie(
    headers: &HeaderMap,
    name: &str,
    value: &str,
    max_age: Option<u64>,
) -> HeaderValue {
    let age = max_age.map_or(String::new(), |age| format!("; Max-Age={age}"));
    let secure = headers
        .get("x-forwarded-proto")
        .is_some_and(|proto| proto.as_bytes().eq_ignore_ascii_case(b"https"));
    let secure = if secure { "; Secure" } else { "" };
    HeaderValue::from_str(&format!(
        "{name}={value}; Path=/; HttpOnly; SameSite=Strict{age}{secure}"
    ))
    .expect("a cookie of hex digits and a tag is a header value")
}
