//! Running a tool: arguments, deadline, cancellation, panics, in that order.
//!
//! Every way a call can go wrong ends as a [`CallError`] that the model can read; none
//! of them unwinds past the registry or takes the process down.

use std::any::Any;
use std::borrow::Cow;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::task::Poll;

use futures::FutureExt;
use plugin_sdk::engine::{CallFn, CallInput, ReadyFn, Redact};
use plugin_sdk::{ToolError, ToolErrorKind};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::limits::Limits;
use crate::tool::Tool;

/// Why a call produced no result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CallErrorKind {
    /// No tool has that name.
    UnknownTool,
    /// The arguments are not valid JSON, or do not fit the tool's schema.
    InvalidArguments,
    /// The tool ran and reported a failure.
    Failed,
    /// The tool's output could not be serialized.
    Output,
    /// The tool panicked.
    Panicked,
    /// The tool did not finish before the deadline and was stopped.
    TimedOut,
    /// The call was cancelled before the tool finished.
    Cancelled,
    /// The process that serves the tool (a dev session's) went away before it answered:
    /// whether the call took effect is not known.
    Disconnected,
}

impl CallErrorKind {
    /// The kind's name in the error JSON, such as `invalid_arguments`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::UnknownTool => "unknown_tool",
            Self::InvalidArguments => "invalid_arguments",
            Self::Failed => "failed",
            Self::Output => "output",
            Self::Panicked => "panicked",
            Self::TimedOut => "timed_out",
            Self::Cancelled => "cancelled",
            Self::Disconnected => "disconnected",
        }
    }
}

/// A failed call, in words the model can act on. Nothing secret is in the message: no
/// panic payload, no list of tools, no internal path.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}: {message}", kind.as_str())]
pub struct CallError {
    kind: CallErrorKind,
    message: String,
}

impl CallError {
    pub(crate) fn new(kind: CallErrorKind, message: String) -> Self {
        Self { kind, message }
    }

    /// What went wrong.
    pub fn kind(&self) -> CallErrorKind {
        self.kind
    }

    /// The message for the model.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The same error with every secret `redact` knows replaced in its message: a tool's
    /// own error text may quote what it had in hand.
    pub(crate) fn redacted(mut self, redact: &(impl Redact + ?Sized)) -> Self {
        if let Cow::Owned(clean) = redact.redact(&self.message) {
            self.message = clean;
        }
        self
    }

    /// The error as the model reads it: `{"error": {"kind": ..., "message": ...}}`.
    pub fn to_json(&self) -> String {
        serde_json::json!({ "error": { "kind": self.kind.as_str(), "message": self.message } })
            .to_string()
    }
}

impl From<ToolError> for CallError {
    fn from(error: ToolError) -> Self {
        let kind = match error.kind() {
            ToolErrorKind::InvalidArguments => CallErrorKind::InvalidArguments,
            ToolErrorKind::Output => CallErrorKind::Output,
            _ => CallErrorKind::Failed,
        };
        Self::new(kind, error.message().to_owned())
    }
}

/// What a call's errors name: a linked tool or an external one.
pub(crate) trait Called {
    /// The canonical id, for the log.
    fn id(&self) -> &str;
    /// The wire name, for the model.
    fn wire_name(&self) -> &str;
}

impl Called for Tool {
    fn id(&self) -> &str {
        Tool::id(self)
    }

    fn wire_name(&self) -> &str {
        Tool::wire_name(self)
    }
}

/// The longest part of an unknown name echoed back, so that a runaway model cannot make
/// the error as large as its request.
const ECHO_LIMIT: usize = 64;

/// What a call asks for beyond the tool: how long it may take, whether it is still wanted.
#[derive(Clone, Copy)]
pub(crate) struct Bounds<'a> {
    pub(crate) deadline: Option<Instant>,
    pub(crate) cancel: Option<&'a CancellationToken>,
    pub(crate) limits: &'a Limits,
}

impl Bounds<'_> {
    /// The deadline, or the default timeout from now.
    pub(crate) fn deadline_or_default(&self) -> Instant {
        self.deadline
            .unwrap_or_else(|| Instant::now() + self.limits.default_timeout)
    }
}

/// The checks before a tool runs: the size of the arguments, and whether the call is
/// still wanted.
pub(crate) fn admit(
    tool: &impl Called,
    arguments: &str,
    bounds: &Bounds<'_>,
) -> Result<(), CallError> {
    if arguments.len() > bounds.limits.max_argument_bytes {
        return Err(CallError::new(
            CallErrorKind::InvalidArguments,
            format!(
                "the arguments are {} bytes, more than the {} bytes a call may carry",
                arguments.len(),
                bounds.limits.max_argument_bytes
            ),
        ));
    }
    // A turn that was abandoned, or a call already late, runs nothing.
    if bounds.cancel.is_some_and(CancellationToken::is_cancelled) {
        return Err(cancelled_call(tool));
    }
    if bounds
        .deadline
        .is_some_and(|deadline| deadline <= Instant::now())
    {
        return Err(timed_out(tool));
    }
    Ok(())
}

/// Runs a tool whose body cannot suspend, to completion: no future to box and nothing a
/// deadline could interrupt.
pub(crate) fn run_ready(
    tool: &Tool,
    run: ReadyFn,
    input: CallInput<'_>,
) -> Result<String, CallError> {
    match std::panic::catch_unwind(AssertUnwindSafe(|| run(input))) {
        Ok(result) => result.map_err(CallError::from),
        Err(payload) => Err(panicked(tool, payload)),
    }
}

/// Runs a tool whose body may suspend: polled once inline, then, if it waits, against
/// the deadline and the token, which need a Tokio runtime with its timer enabled.
pub(crate) async fn run_async(
    tool: &Tool,
    call_fn: CallFn,
    input: CallInput<'_>,
    bounds: Bounds<'_>,
) -> Result<String, CallError> {
    let mut running = match std::panic::catch_unwind(AssertUnwindSafe(|| call_fn(input))) {
        Ok(future) => AssertUnwindSafe(future).catch_unwind(),
        Err(payload) => return Err(panicked(tool, payload)),
    };
    let first = std::future::poll_fn(|cx| Poll::Ready(running.poll_unpin(cx))).await;
    let outcome = match first {
        Poll::Ready(outcome) => outcome,
        Poll::Pending => wait(tool, running, &bounds).await?,
    };
    match outcome {
        Ok(result) => result.map_err(CallError::from),
        Err(payload) => Err(panicked(tool, payload)),
    }
}

/// The rest of a call whose tool did not finish on its first poll: the tool against the
/// deadline and the cancellation token.
pub(crate) async fn wait<T>(
    tool: &impl Called,
    running: impl Future<Output = T> + Unpin,
    bounds: &Bounds<'_>,
) -> Result<T, CallError> {
    let deadline = bounds.deadline_or_default();
    let cancelled = async {
        match bounds.cancel {
            Some(token) => token.cancelled().await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        outcome = running => Ok(outcome),
        () = tokio::time::sleep_until(deadline) => Err(timed_out(tool)),
        () = cancelled => Err(cancelled_call(tool)),
    }
}

#[cold]
pub(crate) fn unknown_tool(name: &str) -> CallError {
    let shown: String = name.chars().take(ECHO_LIMIT).collect();
    let ellipsis = if shown.len() < name.len() { "..." } else { "" };
    CallError::new(
        CallErrorKind::UnknownTool,
        format!("there is no tool named `{shown}{ellipsis}`; call one of the tools you were given, by its exact name"),
    )
}

/// A staged action called as a tool runs: refused, since only a turn performs it.
#[cold]
pub(crate) fn staged_not_called(tool: &impl Called) -> CallError {
    CallError::new(
        CallErrorKind::Failed,
        format!(
            "`{}` is a staged action: a turn stages it when its model calls it and performs it after the reply; it is not called directly",
            tool.id()
        ),
    )
}

/// Checks the call of a staged action, as a call would before running it: the size of
/// the arguments, then whether they fit the action (nothing runs).
pub(crate) fn stage(tool: &Tool, arguments: &str, limits: &Limits) -> Result<(), CallError> {
    let bounds = Bounds {
        deadline: None,
        cancel: None,
        limits,
    };
    admit(tool, arguments, &bounds)?;
    let check = tool.descriptor().staged.expect("only an action is staged");
    // The check is the plugin's deserializer, which a hand-written type may make panic.
    match std::panic::catch_unwind(AssertUnwindSafe(|| check(arguments))) {
        Ok(checked) => checked.map_err(CallError::from),
        Err(payload) => Err(panicked(tool, payload)),
    }
}

#[cold]
fn panicked(tool: &Tool, payload: Box<dyn Any + Send>) -> CallError {
    // The payload may hold anything the tool had in hand, so it goes to the log only.
    tracing::error!(
        tool = tool.id(),
        panic = panic_text(&*payload),
        "a tool panicked"
    );
    CallError::new(
        CallErrorKind::Panicked,
        format!("`{}` failed unexpectedly and was stopped; the error is in the engine's log. Do not retry with the same arguments.", tool.wire_name()),
    )
}

/// A panic's message, for the log.
pub(crate) fn panic_text(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a non-text panic payload")
}

#[cold]
fn timed_out(tool: &impl Called) -> CallError {
    tracing::warn!(
        tool = tool.id(),
        "a tool call passed its deadline and was stopped"
    );
    CallError::new(
        CallErrorKind::TimedOut,
        format!(
            "`{}` did not finish in time and was stopped",
            tool.wire_name()
        ),
    )
}

#[cold]
fn cancelled_call(tool: &impl Called) -> CallError {
    CallError::new(
        CallErrorKind::Cancelled,
        format!("the call of `{}` was cancelled", tool.wire_name()),
    )
}
