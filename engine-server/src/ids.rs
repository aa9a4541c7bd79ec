//! The ids a client names conversations and subscribers by, and the random ones the
//! server makes.

/// What a conversation or subscriber id may be: it travels in a header and in logs.
pub(super) fn valid_id(id: &str) -> bool {
    (1..=128).contains(&id.len())
        && id
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || b"-_.:@".contains(&byte))
}

/// What separates a channel's name from its own id in the id the engine keeps for a
/// channel's conversation (`webhook:c-42`). The turn route refuses ids that hold it, so
/// that no client of the route can take a channel's conversation first.
pub(super) const CHANNEL_MARK: char = ':';

/// `bytes` random bytes from the system's source, as hex: conversation ids, session
/// keys, CSRF and dev tokens.
pub(crate) fn random_hex(bytes: usize) -> String {
    let mut buffer = vec![0u8; bytes];
    getrandom::fill(&mut buffer).expect("the system's random source answers");
    buffer.iter().map(|byte| format!("{byte:02x}")).collect()
}
