//! The limits an engine applies to every call and every turn.

use std::time::Duration;

/// Limits an engine applies to every call and every turn.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// How long a call may run when the caller sets no deadline.
    pub default_timeout: Duration,
    /// The largest arguments text accepted, in bytes; larger ones are refused unread.
    pub max_argument_bytes: usize,
    /// How many times hooks may replay one turn; past it the engine keeps the last reply.
    pub max_regenerations: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            default_timeout: Duration::from_secs(30),
            max_argument_bytes: 1 << 20,
            max_regenerations: 2,
        }
    }
}
