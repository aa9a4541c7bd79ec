//! The hooks that run before the model, as the tests name them.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use plugin_sdk::prelude::*;

use crate::support::{Gate, Record};

/// Tells the model that this is the first turn.
#[define_hook(event = "conversation_start", position = 10)]
fn first_turn_context() -> PreModelOutcome {
    PreModelOutcome::InjectContext("first turn".into())
}

/// Halts a conversation that opens with "halt at start".
#[define_hook(event = "conversation_start", position = 20)]
fn halt_at_start(event: &ConversationStart) -> PreModelOutcome {
    if event.message() == "halt at start" {
        PreModelOutcome::Halt {
            message: "halted at start".into(),
            persist: true,
        }
    } else {
        PreModelOutcome::Observe
    }
}

/// Injects A.
#[define_hook(event = "message_received", position = 20)]
fn inject_a() -> PreModelOutcome {
    PreModelOutcome::InjectContext("A".into())
}

/// Injects B.
#[define_hook(event = "message_received", position = 30)]
async fn inject_b(_event: &MessageReceived) -> PreModelOutcome {
    tokio::task::yield_now().await;
    PreModelOutcome::InjectContext("B".into())
}

/// Halts on "stop", leaving no trace.
#[define_hook(event = "message_received", position = 25)]
fn halt_on_stop(event: &MessageReceived) -> PreModelOutcome {
    if event.message() == "stop" {
        PreModelOutcome::Halt {
            message: "stopped".into(),
            persist: false,
        }
    } else {
        PreModelOutcome::Observe
    }
}

/// The messages `record_received` saw, by conversation.
pub static RECEIVED: Record = Record::new();

/// Records each message it sees, to show when it does not run; after the halts.
#[define_hook(event = "message_received", position = 40)]
fn record_received(event: &MessageReceived) {
    RECEIVED.push(event.turn().conversation(), event.message());
}

/// Injects its name; same position as `tie_a`, and defined first.
#[define_hook(event = "message_received", position = 50)]
fn tie_b() -> PreModelOutcome {
    PreModelOutcome::InjectContext("tie_b".into())
}

/// Injects its name; same position as `tie_b`.
#[define_hook(event = "message_received", position = 50)]
fn tie_a() -> PreModelOutcome {
    PreModelOutcome::InjectContext("tie_a".into())
}

/// Panics in a plain function.
#[define_hook(event = "message_received", position = 1)]
fn panics_sync() -> PreModelOutcome {
    panic!("the sync hook fell over")
}

/// Panics after an await.
#[define_hook(event = "message_received", position = 2)]
async fn panics_async() -> PreModelOutcome {
    tokio::task::yield_now().await;
    panic!("the async hook fell over")
}

/// Fails with an error of its own.
#[define_hook(event = "message_received", position = 3)]
fn fails() -> Result<PreModelOutcome, String> {
    Err("the store is down".into())
}

/// Never finishes: waits on a timer far past its timeout.
#[define_hook(event = "message_received", position = 4, timeout_ms = 50)]
async fn hangs_async() -> PreModelOutcome {
    tokio::time::sleep(Duration::from_secs(3600)).await;
    PreModelOutcome::Halt {
        message: "too late".into(),
        persist: true,
    }
}

/// Opened by `blocks_sync`'s test once the turn has gone on without it.
pub static BLOCKS_SYNC: Gate = Gate::new();

/// Blocks its thread until the test opens the gate.
#[define_hook(event = "message_received", position = 5, timeout_ms = 50)]
fn blocks_sync() -> PreModelOutcome {
    BLOCKS_SYNC.wait();
    PreModelOutcome::Halt {
        message: "too late".into(),
        persist: true,
    }
}

/// Opened by `blocks_again`'s test once it has seen a run skipped.
pub static BLOCKS_AGAIN: Gate = Gate::new();
/// How many times `blocks_again` started.
pub static BLOCKS_AGAIN_STARTS: AtomicUsize = AtomicUsize::new(0);

/// Counts its starts, then blocks its thread until the test opens the gate.
#[define_hook(event = "message_received", position = 6, timeout_ms = 50)]
fn blocks_again() {
    BLOCKS_AGAIN_STARTS.fetch_add(1, Ordering::SeqCst);
    BLOCKS_AGAIN.wait();
}

/// Opened by `blocks_slowly`'s test once the concurrent turns are done.
pub static BLOCKS_SLOWLY: Gate = Gate::new();
/// How many times `blocks_slowly` started.
pub static BLOCKS_SLOWLY_STARTS: AtomicUsize = AtomicUsize::new(0);

/// Counts its starts, then blocks its thread until the test opens the gate.
#[define_hook(event = "message_received", position = 6, timeout_ms = 50)]
fn blocks_slowly() {
    BLOCKS_SLOWLY_STARTS.fetch_add(1, Ordering::SeqCst);
    BLOCKS_SLOWLY.wait();
}

/// Opened by `guard_blocks`'s test.
pub static GUARD_BLOCKS: Gate = Gate::new();

/// A guard whose store hangs: blocks until the test opens the gate, and fails closed.
#[define_hook(
    event = "message_received",
    position = 7,
    timeout_ms = 50,
    fail_closed = { "en-US": "The guard is unavailable; please try again.", "it-IT": "La guardia non è disponibile; riprova." },
)]
fn guard_blocks() {
    GUARD_BLOCKS.wait();
}

/// A guard that fails with an error of its own, and fails closed.
#[define_hook(
    event = "message_received",
    position = 8,
    fail_closed = "The guard failed."
)]
fn guard_fails() -> Result<PreModelOutcome, String> {
    Err("the moderation service is down".into())
}

/// A guard that panics, and fails closed.
#[define_hook(
    event = "message_received",
    position = 9,
    fail_closed = "The guard failed."
)]
async fn guard_panics() -> PreModelOutcome {
    tokio::task::yield_now().await;
    panic!("the guard fell over")
}

/// A guard whose plain `fn` panics, and fails closed.
#[define_hook(
    event = "message_received",
    position = 9,
    fail_closed = "The guard failed."
)]
fn guard_panics_sync() -> PreModelOutcome {
    panic!("the sync guard fell over")
}

/// A guard that never answers, and fails closed.
#[define_hook(
    event = "conversation_start",
    timeout_ms = 50,
    fail_closed = "The guard failed."
)]
async fn guard_hangs() -> PreModelOutcome {
    tokio::time::sleep(Duration::from_secs(3600)).await;
    PreModelOutcome::Observe
}
