//! Running one hook: under its timeout, with its panics and errors caught and logged.
//! Whatever goes wrong is a [`Failed`], which the pipeline reads as observe, or as the
//! hook's `fail_closed` reply when it declares one.

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use plugin_dev_wire::{HookOutcome, Outcome, WireEvent};
use plugin_sdk::abort::Abort;
use plugin_sdk::engine::{HookEntry, HookInput, HookResult, StateWrites};
use plugin_sdk::ToolContext;

use super::{Hook, HookRun};
use crate::dispatch::panic_text;

/// Fires a run's abort signal when dropped.
struct FireOnDrop(Abort);

impl Drop for FireOnDrop {
    fn drop(&mut self) {
        self.0.fire();
    }
}

/// The hook failed: it returned an error, panicked, ran past its timeout, or was not
/// started because runs of it from other turns are under way. Already logged.
pub(super) struct Failed;

/// How a run ended, before it is logged.
enum Ended<E: WireEvent> {
    Returned(HookResult<E>),
    /// A dev session's hook returned: its outcome, and the state it wrote.
    Remote(E::Outcome, StateWrites),
    Panicked(Box<dyn Any + Send>),
    TimedOut,
    /// Not started: a thread of the hook is left behind, or no permit came free within
    /// the timeout; the runs skipped so far.
    StillRunning(u64),
}

/// Runs `hook` at `payload` in the context `run` holds, and answers its outcome with the
/// state it wrote, or that it failed (logged with the hook's id and what the failure does
/// to the turn; what a failed hook wrote is dropped). Its abort signal fires once the
/// engine stops waiting, whatever the reason.
///
/// A body that cannot suspend runs on a blocking thread: a hook that blocks or loops is
/// then left behind at its timeout (its thread runs on until it returns, and its outcome
/// is dropped), and the turn goes on. Such a hook has a few runs under way at once at
/// most, and is skipped while a thread of it is left behind (see [`super::left_behind`]).
pub(super) async fn run<E: WireEvent>(
    hook: &Hook,
    entry: HookEntry<E>,
    payload: &Arc<E>,
    run: HookRun,
) -> Result<(E::Outcome, StateWrites), Failed> {
    let HookRun {
        context,
        abort,
        frame,
    } = run;
    // Fired however the run ends, the turn dropping it included: a thread left behind
    // holds the context, so its own drop would come too late.
    let _fire = FireOnDrop(abort);
    if let (Some(remote), Some(frame)) = (hook.remote(), frame) {
        let ended = run_remote::<E>(hook, remote.as_ref(), frame, payload, context).await;
        return outcome_of(hook, ended, None);
    }
    // A hook whose parameters read nothing of the turn gets the shared empty context.
    let context = context.map(Arc::new);
    // Waiting for a permit counts against the timeout.
    let deadline = tokio::time::Instant::now() + hook.timeout();
    let ended: Ended<E> = match entry {
        HookEntry::Ready(run) => match hook.left_behind.start(hook.timeout()).await {
            Err(skipped) => Ended::StillRunning(skipped),
            Ok((waiting, running)) => {
                let payload = Arc::clone(payload);
                let context = context.clone();
                let task = tokio::task::spawn_blocking(move || {
                    let _running = running;
                    let context = context.as_deref().unwrap_or(ToolContext::empty());
                    run(HookInput::new(&*payload).with_context(context))
                });
                let ended = match tokio::time::timeout_at(deadline, task).await {
                    Ok(Ok(result)) => Ended::Returned(result),
                    Ok(Err(error)) => match error.try_into_panic() {
                        Ok(payload) => Ended::Panicked(payload),
                        // The task is never aborted, so a join error is a panic or the
                        // runtime shutting down under the turn.
                        Err(error) => Ended::Returned(Err(error.to_string())),
                    },
                    Err(_) => Ended::TimedOut,
                };
                // Past the timeout, this leaves the thread behind.
                drop(waiting);
                ended
            }
        },
        HookEntry::Async(run) => {
            let context = context.as_deref().unwrap_or(ToolContext::empty());
            let running = std::panic::catch_unwind(AssertUnwindSafe(|| {
                AssertUnwindSafe(run(HookInput::new(&**payload).with_context(context)))
                    .catch_unwind()
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
    outcome_of(hook, ended, context.as_deref())
}

/// Runs a dev session's hook: the payload sent, the outcome read back, under the hook's
/// timeout (past it, the call is dropped and the session told).
async fn run_remote<E: WireEvent>(
    hook: &Hook,
    remote: &dyn super::RemoteHook,
    mut frame: plugin_dev_wire::CallFrame,
    payload: &Arc<E>,
    context: Option<ToolContext>,
) -> Ended<E> {
    frame.event = Some(E::EVENT.as_str().to_owned());
    frame.arguments = serde_json::to_string(&payload.to_payload()).expect("a payload serializes");
    let running = remote.run(frame, context.unwrap_or_default());
    match tokio::time::timeout(hook.timeout(), running).await {
        Err(_) => Ended::TimedOut,
        Ok(Err(why)) => Ended::Returned(Err(why)),
        Ok(Ok(Outcome::Err { message, .. })) => Ended::Returned(Err(message)),
        Ok(Ok(Outcome::Ok {
            output,
            state_writes,
        })) => {
            let outcome = serde_json::from_str::<HookOutcome>(&output)
                .map_err(|error| format!("its outcome did not parse: {error}"))
                .and_then(E::outcome_from_wire);
            // A hook that declared no access to the conversation's state keeps no write.
            let writes = if remote.needs().conversation {
                plugin_dev_wire::state_writes(state_writes)
            } else {
                StateWrites::new()
            };
            match outcome {
                Ok(outcome) => Ended::Remote(outcome, writes),
                Err(why) => Ended::Returned(Err(why)),
            }
        }
    }
}

/// How a run that `ended` counts: its outcome and writes, or logged as failed.
fn outcome_of<E: WireEvent>(
    hook: &Hook,
    ended: Ended<E>,
    context: Option<&ToolContext>,
) -> Result<(E::Outcome, StateWrites), Failed> {
    let then = if hook.descriptor.fail_closed.is_some() {
        "the hook fails closed"
    } else {
        "the turn goes on as if it observed"
    };
    let (id, event) = (hook.id(), E::EVENT.as_str());
    match ended {
        Ended::Returned(Ok(outcome)) => {
            let writes = context
                .map(ToolContext::take_state_writes)
                .unwrap_or_default();
            return Ok((outcome, writes));
        }
        Ended::Remote(outcome, writes) => return Ok((outcome, writes)),
        Ended::Returned(Err(error)) => {
            tracing::warn!(hook = id, event, %error, "a hook returned an error; {then}");
        }
        Ended::Panicked(payload) => {
            let panic = panic_text(&*payload);
            tracing::error!(hook = id, event, panic, "a hook panicked; {then}");
        }
        Ended::TimedOut => {
            let timeout_ms = hook.timeout().as_millis() as u64;
            tracing::warn!(
                hook = id,
                event,
                timeout_ms,
                "a hook ran past its timeout; {then}"
            );
        }
        Ended::StillRunning(skipped) => {
            tracing::warn!(
                hook = id,
                event,
                skipped,
                "runs of the hook from other turns are under way (one left behind, or every permit taken past its timeout): not started; {then}"
            );
        }
    }
    Err(Failed)
}
