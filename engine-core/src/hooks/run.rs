//! Running one hook: under its timeout, with its panics and errors caught and logged.
//! Whatever goes wrong, the answer is "no outcome", which the pipeline reads as observe.

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use plugin_sdk::engine::{HookEntry, HookEvent, HookInput, HookResult};

use super::Hook;
use crate::dispatch::panic_text;

/// How a run ended, before it is logged.
enum Ended<E: HookEvent> {
    Returned(HookResult<E>),
    Panicked(Box<dyn Any + Send>),
    TimedOut,
}

/// Runs `hook` at `payload`, and answers its outcome; `None` when it failed, panicked or
/// ran past its timeout, each logged with the hook's id.
///
/// A body that cannot suspend runs on a blocking thread: a hook that blocks or loops is
/// then left behind at its timeout (its thread runs on until it returns, and its outcome
/// is dropped), and the turn goes on.
pub(super) async fn run<E: HookEvent>(
    hook: &Hook,
    entry: HookEntry<E>,
    payload: &Arc<E>,
) -> Option<E::Outcome> {
    let ended: Ended<E> = match entry {
        HookEntry::Ready(run) => {
            let payload = Arc::clone(payload);
            let task = tokio::task::spawn_blocking(move || run(HookInput::new(&payload)));
            match tokio::time::timeout(hook.timeout(), task).await {
                Ok(Ok(result)) => Ended::Returned(result),
                Ok(Err(error)) => match error.try_into_panic() {
                    Ok(payload) => Ended::Panicked(payload),
                    // The task is never aborted, so a join error is a panic or the
                    // runtime shutting down under the turn.
                    Err(error) => Ended::Returned(Err(error.to_string())),
                },
                Err(_) => Ended::TimedOut,
            }
        }
        HookEntry::Async(run) => {
            let running = std::panic::catch_unwind(AssertUnwindSafe(|| {
                AssertUnwindSafe(run(HookInput::new(payload))).catch_unwind()
            }));
            match running {
                Err(payload) => Ended::Panicked(payload),
                Ok(running) => match tokio::time::timeout(hook.timeout(), running).await {
                    Ok(Ok(result)) => Ended::Returned(result),
                    Ok(Err(payload)) => Ended::Panicked(payload),
                    Err(_) => Ended::TimedOut,
                },
            }
        }
    };
    match ended {
        Ended::Returned(Ok(outcome)) => Some(outcome),
        Ended::Returned(Err(error)) => {
            tracing::warn!(hook = hook.id(), event = E::EVENT.as_str(), %error, "a hook returned an error; the turn goes on as if it observed");
            None
        }
        Ended::Panicked(payload) => {
            tracing::error!(
                hook = hook.id(),
                event = E::EVENT.as_str(),
                panic = panic_text(&*payload),
                "a hook panicked; the turn goes on as if it observed"
            );
            None
        }
        Ended::TimedOut => {
            tracing::warn!(
                hook = hook.id(),
                event = E::EVENT.as_str(),
                timeout_ms = hook.timeout().as_millis() as u64,
                "a hook ran past its timeout; the turn goes on as if it observed"
            );
            None
        }
    }
}
