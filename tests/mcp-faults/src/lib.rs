//! Tools that misbehave on purpose, so that the MCP tests can see a panic, a timeout and
//! a cancellation reach a real client. `src/main.rs` links them into the example engine's
//! command line.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "faults", engine = ">=0.1" }

/// How long to wait.
#[derive(Deserialize, JsonSchema, ToolArgs)]
pub struct Nap {
    /// Milliseconds.
    pub ms: u64,
}

/// What a finished nap reports.
#[derive(Serialize, JsonSchema)]
pub struct Slept {
    /// Milliseconds slept.
    pub slept_ms: u64,
}

/// Naps stopped before they finished: by a deadline, or by the client's cancellation.
static STOPPED: AtomicU32 = AtomicU32::new(0);

/// Counts a nap as stopped when it is dropped unfinished.
struct StopCounter {
    finished: bool,
}

impl Drop for StopCounter {
    fn drop(&mut self) {
        if !self.finished {
            STOPPED.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// Sleep for the given time, then say so.
#[define_tool]
pub async fn sleep(nap: Nap) -> Slept {
    let mut counter = StopCounter { finished: false };
    tokio::time::sleep(Duration::from_millis(nap.ms)).await;
    counter.finished = true;
    Slept { slept_ms: nap.ms }
}

/// How many naps have been stopped.
#[derive(Serialize, JsonSchema)]
pub struct Stopped {
    /// Naps dropped before they finished.
    pub stopped: u32,
}

/// Tell how many naps were stopped before they finished.
#[define_tool(read_only)]
pub async fn stopped_naps() -> Stopped {
    Stopped {
        stopped: STOPPED.load(Ordering::SeqCst),
    }
}

/// Fail by panicking, with a message that must never reach the client.
#[define_tool]
pub async fn explode() -> Stopped {
    panic!("secret-token-4242 leaked by a panic")
}
