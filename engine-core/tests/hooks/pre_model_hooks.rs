//! The hooks that run before the model, as the tests name them.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use plugin_sdk::prelude::*;

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

pub static AFTER_HALT_RUNS: AtomicUsize = AtomicUsize::new(0);

/// Counts its runs, to show that it does not run after a halt.
#[define_hook(event = "message_received", position = 40)]
fn count_after_halt() {
    AFTER_HALT_RUNS.fetch_add(1, Ordering::SeqCst);
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
pub static GATE: (Mutex<bool>, Condvar) = (Mutex::new(false), Condvar::new());

/// Blocks its thread until the test opens the gate.
#[define_hook(event = "message_received", position = 5, timeout_ms = 50)]
fn blocks_sync() -> PreModelOutcome {
    let (open, opened) = &GATE;
    let _open = opened
        .wait_while(open.lock().unwrap(), |open| !*open)
        .unwrap();
    PreModelOutcome::Halt {
        message: "too late".into(),
        persist: true,
    }
}
