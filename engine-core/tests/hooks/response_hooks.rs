//! The hooks that run after the model, as the tests name them.

use plugin_sdk::prelude::*;

use crate::support::Record;

/// Replaces a dirty reply.
#[define_hook(event = "response_generated", mutates_response, position = 10)]
fn replace_dirty(event: &ResponseGenerated) -> ResponseOutcome {
    if event.response().contains("dirty") {
        ResponseOutcome::ReplaceResponse {
            message: "replaced".into(),
        }
    } else {
        ResponseOutcome::Observe
    }
}

/// Regenerates a dirty reply.
#[define_hook(event = "response_generated", mutates_response, position = 20)]
async fn regenerate_dirty(event: &ResponseGenerated) -> ResponseOutcome {
    if event.response().contains("dirty") {
        ResponseOutcome::Regenerate {
            reason: Some("dirty".into()),
        }
    } else {
        ResponseOutcome::Observe
    }
}

/// The regeneration counts `record_counts` saw, by conversation.
pub static COUNTS_SEEN: Record = Record::new();

/// Records each pass's regeneration count; only observes.
#[define_hook(event = "response_generated")]
fn record_counts(event: &ResponseGenerated) {
    let count = event.regeneration_count().to_string();
    COUNTS_SEEN.push(event.turn().conversation(), count);
}

/// Observes and keeps nothing: a hook that leaves replies streaming, and shares no state
/// with tests running beside it.
#[define_hook(event = "response_generated")]
fn observe_only(event: &ResponseGenerated) {
    let _ = event.response();
}

/// What `record_sent` saw sent, by conversation.
pub static SENT: Record = Record::new();

/// Records what was sent.
#[define_hook(event = "response_sent")]
async fn record_sent(event: &ResponseSent) {
    SENT.push(event.turn().conversation(), event.response());
}

/// Checks every reply, and fails closed: its check service is down.
#[define_hook(
    event = "response_generated",
    mutates_response,
    position = 30,
    fail_closed = "The reply could not be checked."
)]
fn reply_guard_fails(event: &ResponseGenerated) -> Result<ResponseOutcome, String> {
    let _ = event.response();
    Err("the check service is down".into())
}

/// A reply guard whose plain `fn` panics, and fails closed.
#[define_hook(
    event = "response_generated",
    mutates_response,
    position = 31,
    fail_closed = "The reply could not be checked."
)]
fn reply_guard_panics() -> ResponseOutcome {
    panic!("the reply guard fell over")
}

/// A reply guard that never answers, and fails closed.
#[define_hook(
    event = "response_generated",
    mutates_response,
    position = 32,
    timeout_ms = 50,
    fail_closed = "The reply could not be checked."
)]
async fn reply_guard_hangs() -> ResponseOutcome {
    tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
    ResponseOutcome::Observe
}
