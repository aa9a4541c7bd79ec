//! Tokens at rest: sealed with ChaCha20-Poly1305 under the key `[oauth] key_env` names,
//! bound to what they are for (a row moved to another subscriber does not open).

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};

/// The bytes of a nonce, stored before the ciphertext.
const NONCE_BYTES: usize = 12;

/// The sealing key.
#[derive(Clone)]
pub struct SealKey([u8; 32]);

impl std::fmt::Debug for SealKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SealKey([REDACTED])")
    }
}

impl SealKey {
    /// The key written as 64 hex digits (`openssl rand -hex 32`), or why not.
    pub fn from_hex(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if text.len() != 64 || !text.bytes().all(|byte| byte.is_ascii_hexdigit()) {
            return Err(format!(
                "is {} characters, and a key is 64 hex digits (`openssl rand -hex 32`)",
                text.len()
            ));
        }
        let mut key = [0u8; 32];
        for (at, byte) in key.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&text[at * 2..at * 2 + 2], 16).expect("checked hex");
        }
        Ok(Self(key))
    }

    /// `plain` sealed for `bound` (what it is for): a fresh nonce, then the ciphertext.
    pub(crate) fn seal(&self, bound: &str, plain: &[u8]) -> Vec<u8> {
        let mut nonce = [0u8; NONCE_BYTES];
        getrandom::fill(&mut nonce).expect("the system has randomness");
        let cipher = ChaCha20Poly1305::new(Key::from_slice(&self.0));
        let payload = Payload {
            msg: plain,
            aad: bound.as_bytes(),
        };
        let sealed = cipher
            .encrypt(Nonce::from_slice(&nonce), payload)
            .expect("a payload of a token's size seals");
        [nonce.as_slice(), &sealed].concat()
    }

    /// What `sealed` holds, if it was sealed with this key for `bound`.
    pub(crate) fn open(&self, bound: &str, sealed: &[u8]) -> Option<Vec<u8>> {
        if sealed.len() < NONCE_BYTES {
            return None;
        }
        let (nonce, ciphertext) = sealed.split_at(NONCE_BYTES);
        let payload = Payload {
            msg: ciphertext,
            aad: bound.as_bytes(),
        };
        ChaCha20Poly1305::new(Key::from_slice(&self.0))
            .decrypt(Nonce::from_slice(nonce), payload)
            .ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(digit: char) -> SealKey {
        SealKey::from_hex(&digit.to_string().repeat(64)).unwrap()
    }

    #[test]
    fn a_sealed_token_opens_only_with_its_key_and_for_what_it_was_bound_to() {
        let sealed = key('a').seal("grant\0bot\0ada\0cal:google", b"token");
        assert!(
            !sealed.windows(5).any(|window| window == b"token"),
            "sealed"
        );
        assert_eq!(
            key('a')
                .open("grant\0bot\0ada\0cal:google", &sealed)
                .as_deref(),
            Some(&b"token"[..])
        );
        assert_eq!(key('a').open("grant\0bot\0eve\0cal:google", &sealed), None);
        assert_eq!(key('b').open("grant\0bot\0ada\0cal:google", &sealed), None);
        assert_eq!(key('a').open("x", &sealed[..5]), None);
        // Two seals of one token differ: a fresh nonce each time.
        assert_ne!(
            sealed,
            key('a').seal("grant\0bot\0ada\0cal:google", b"token")
        );
    }

    #[test]
    fn a_key_is_64_hex_digits() {
        assert!(SealKey::from_hex(&"0f".repeat(32)).is_ok());
        for text in ["", "zz", &"0".repeat(63), &"g".repeat(64)] {
            assert!(SealKey::from_hex(text).is_err(), "{text}");
        }
    }
}
