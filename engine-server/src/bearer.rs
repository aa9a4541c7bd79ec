//! The bearer token: what makes one acceptable, and the constant-time check of
//! `Authorization: Bearer <token>`.

use axum::body::Body;
use axum::http::{header, HeaderValue, Response, StatusCode};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The shortest token accepted: 32 bytes, as `openssl rand -hex 16` prints; guessing one
/// over the network is then out of reach.
pub(super) const MIN_TOKEN_BYTES: usize = 32;

/// Why `token` cannot be the server's token, if it cannot: too short to resist guessing,
/// or holding characters (space, control) that clients and shells mangle.
pub(super) fn weakness(token: &str) -> Option<&'static str> {
    if token.len() < MIN_TOKEN_BYTES {
        Some("is shorter than 32 bytes")
    } else if token.chars().any(|c| c.is_whitespace() || c.is_control()) {
        Some("contains whitespace or control characters")
    } else {
        None
    }
}

/// Checks `Authorization: Bearer <token>`.
#[derive(Clone)]
pub(super) struct Bearer {
    /// The token's SHA-256: both sides are hashed before the comparison, so that neither
    /// the time taken nor an early return on a length mismatch tells a guess anything.
    digest: [u8; 32],
}

impl Bearer {
    pub(super) fn new(token: &str) -> Self {
        Self {
            digest: Sha256::digest(token.as_bytes()).into(),
        }
    }

    /// Whether `Authorization: <authorization>` carries the token.
    pub(super) fn admits(&self, authorization: Option<&HeaderValue>) -> bool {
        // Bytes, not text: a token need not be ASCII.
        let Some(value) = authorization.map(HeaderValue::as_bytes) else {
            return false;
        };
        let Some(space) = value.iter().position(|&byte| byte == b' ') else {
            return false;
        };
        let (scheme, token) = (&value[..space], &value[space + 1..]);
        // The scheme is case-insensitive (RFC 9110).
        scheme.eq_ignore_ascii_case(b"bearer") && self.admits_token(token)
    }

    /// Whether `token` is the token (the panel's login form sends it bare).
    pub(super) fn admits_token(&self, token: &[u8]) -> bool {
        let digest: [u8; 32] = Sha256::digest(token).into();
        bool::from(digest.ct_eq(&self.digest))
    }

    /// The answer to a request without the token (nor a session).
    pub(super) fn refusal(&self) -> Response<Body> {
        Response::builder()
            .status(StatusCode::UNAUTHORIZED)
            .header(header::WWW_AUTHENTICATE, "Bearer")
            .body(Body::from(
                "this server needs `Authorization: Bearer <token>`, with the token it was started with (a browser signs in at /login)",
            ))
            .expect("a valid response")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "s3cret-0123456789abcdef0123456789";

    #[test]
    fn the_bearer_check_wants_the_scheme_and_the_exact_token() {
        let bearer = Bearer::new(TOKEN);
        let admits = |value: &str| bearer.admits(Some(&HeaderValue::from_str(value).unwrap()));
        assert!(admits(&format!("Bearer {TOKEN}")));
        assert!(admits(&format!("bearer {TOKEN}")));
        assert!(!admits(&format!("Bearer {}", &TOKEN[..TOKEN.len() - 1])));
        assert!(!admits(&format!("Bearer {TOKEN}2")));
        assert!(!admits(&format!("Basic {TOKEN}")));
        assert!(!admits(TOKEN));
        assert!(!bearer.admits(None));
        let accented = format!("s\u{e9}{TOKEN}");
        let value = HeaderValue::from_bytes(format!("Bearer {accented}").as_bytes()).unwrap();
        assert!(Bearer::new(&accented).admits(Some(&value)));
    }

    #[test]
    fn a_short_token_or_one_with_spaces_or_controls_is_weak() {
        assert_eq!(weakness(TOKEN), None);
        assert_eq!(weakness(&"x".repeat(31)), Some("is shorter than 32 bytes"));
        for bad in [" ", "\t", "\n", "\u{7}", "\u{a0}"] {
            let token = format!("{TOKEN}{bad}");
            assert_eq!(
                weakness(&token),
                Some("contains whitespace or control characters"),
                "{token:?}"
            );
        }
    }
}
