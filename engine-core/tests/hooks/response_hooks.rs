//! The hooks that run after the model, as the tests name them.

use std::sync::Mutex;

use plugin_sdk::prelude::*;

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

pub static COUNTS_SEEN: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// Records each pass's regeneration count; only observes.
#[define_hook(event = "response_generated")]
fn record_counts(event: &ResponseGenerated) {
    COUNTS_SEEN.lock().unwrap().push(event.regeneration_count());
}

/// Observes and keeps nothing: a hook that leaves replies streaming, and shares no state
/// with tests running beside it.
#[define_hook(event = "response_generated")]
fn observe_only(event: &ResponseGenerated) {
    let _ = event.response();
}

pub static SENT: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Records what was sent.
#[define_hook(event = "response_sent")]
async fn record_sent(event: &ResponseSent) {
    SENT.lock().unwrap().push(event.response().to_owned());
}
