//! Calling a tool: look-up, arguments, deadline, cancellation, panics, in that order.
//!
//! Every way a call can go wrong ends as a [`CallError`] that the model can read; none
//! of them unwinds past the registry or takes the process down.

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::FutureExt;
use plugin_sdk::{BoxFuture, CallFn, CallInput, ToolContext, ToolEntry, ToolError, ToolErrorKind};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::registry::{Registry, Tool};

/// One tool call, as the model (or a client) asked for it.
#[derive(Clone, Copy)]
pub struct Call<'a> {
    tool: &'a str,
    arguments: &'a str,
    context: &'a ToolContext,
    deadline: Option<Instant>,
    cancel: Option<&'a CancellationToken>,
}

impl<'a> Call<'a> {
    /// A call of `tool` (id or wire name) with `arguments` (JSON text) in `context`, under
    /// the registry's default timeout and with no cancellation.
    pub fn new(tool: &'a str, arguments: &'a str, context: &'a ToolContext) -> Self {
        Self {
            tool,
            arguments,
            context,
            deadline: None,
            cancel: None,
        }
    }

    /// The same call, stopped at `deadline`.
    pub fn deadline(mut self, deadline: Instant) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// The same call, stopped when `token` is cancelled (the turn was abandoned).
    pub fn cancel_on(mut self, token: &'a CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }
}

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
        }
    }
}

/// A failed call, in words the model can act on. Nothing secret is in the message: no
/// panic payload, no list of tools, no internal path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallError {
    kind: CallErrorKind,
    message: String,
}

impl CallError {
    fn new(kind: CallErrorKind, message: String) -> Self {
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

    /// The error as the model reads it: `{"error": {"kind": ..., "message": ...}}`.
    pub fn to_json(&self) -> String {
        serde_json::json!({ "error": { "kind": self.kind.as_str(), "message": self.message } })
            .to_string()
    }
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.as_str(), self.message)
    }
}

impl std::error::Error for CallError {}

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

/// The future of [`Registry::call`].
#[must_use = "a call does nothing unless it is awaited"]
pub struct CallFuture<'a> {
    state: CallState<'a>,
}

enum CallState<'a> {
    /// Not polled yet: nothing has run.
    Start(&'a Registry, Call<'a>),
    /// A tool that may suspend, running.
    Running(BoxFuture<'a, Result<String, CallError>>),
    /// Finished; the result until it is taken.
    Done(Option<Result<String, CallError>>),
}

impl Future for CallFuture<'_> {
    type Output = Result<String, CallError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let state = &mut self.state;
        if let CallState::Start(registry, call) = *state {
            *state = registry.start(call);
        }
        match state {
            CallState::Start(..) => unreachable!("started above"),
            CallState::Running(future) => {
                let result = std::task::ready!(future.as_mut().poll(cx));
                *state = CallState::Done(None);
                Poll::Ready(result)
            }
            CallState::Done(result) => match result.take() {
                Some(result) => Poll::Ready(result),
                None => panic!("a CallFuture was polled after it completed"),
            },
        }
    }
}

/// How a tool's future ends: its own result, or the payload of its panic.
type Outcome = Result<Result<String, ToolError>, Box<dyn Any + Send>>;

/// The longest part of an unknown name echoed back, so that a runaway model cannot make
/// the error as large as its request.
const ECHO_LIMIT: usize = 64;

impl Registry {
    /// Runs one call; the future gives the tool's output as JSON text.
    ///
    /// A tool whose body has no `.await` ([`ToolEntry::Ready`]) runs on the first poll,
    /// at the cost of a look-up and serde. Any other runs in a boxed future, polled once
    /// inline; only a tool that then waits sets up the deadline and the cancellation,
    /// which need a Tokio runtime with its timer enabled.
    pub fn call<'a>(&'a self, call: Call<'a>) -> CallFuture<'a> {
        CallFuture {
            state: CallState::Start(self, call),
        }
    }

    /// What the first poll of a call does: every check, then the tool if it cannot
    /// suspend, or the future that runs it.
    fn start<'a>(&'a self, call: Call<'a>) -> CallState<'a> {
        let tool = match self.admit(&call) {
            Ok(tool) => tool,
            Err(error) => return CallState::Done(Some(Err(error))),
        };
        let input = CallInput::new(call.arguments, call.context);
        match tool.descriptor().entry {
            // The body cannot suspend: it runs to completion here, with no future to box
            // and nothing a deadline could interrupt.
            ToolEntry::Ready(run) => {
                let result = match std::panic::catch_unwind(AssertUnwindSafe(|| run(input))) {
                    Ok(result) => result.map_err(CallError::from),
                    Err(payload) => Err(panicked(tool, payload)),
                };
                CallState::Done(Some(result))
            }
            ToolEntry::Async(call_fn) => {
                CallState::Running(Box::pin(self.run_async(tool, call_fn, input, call)))
            }
        }
    }

    /// The checks before a tool runs: its name, the size of the arguments, and whether
    /// the call is still wanted.
    fn admit(&self, call: &Call<'_>) -> Result<&Tool, CallError> {
        let Some(tool) = self.tool(call.tool) else {
            return Err(unknown_tool(call.tool));
        };
        if call.arguments.len() > self.limits.max_argument_bytes {
            return Err(CallError::new(
                CallErrorKind::InvalidArguments,
                format!(
                    "the arguments are {} bytes, more than the {} bytes a call may carry",
                    call.arguments.len(),
                    self.limits.max_argument_bytes
                ),
            ));
        }
        // A turn that was abandoned, or a call already late, runs nothing.
        if call.cancel.is_some_and(CancellationToken::is_cancelled) {
            return Err(cancelled_call(tool));
        }
        if call
            .deadline
            .is_some_and(|deadline| deadline <= Instant::now())
        {
            return Err(timed_out(tool));
        }
        Ok(tool)
    }

    /// A tool whose body may suspend: polled once inline, then, if it waits, against the
    /// deadline and the token.
    async fn run_async(
        &self,
        tool: &Tool,
        call_fn: CallFn,
        input: CallInput<'_>,
        call: Call<'_>,
    ) -> Result<String, CallError> {
        let mut running = match std::panic::catch_unwind(AssertUnwindSafe(|| call_fn(input))) {
            Ok(future) => AssertUnwindSafe(future).catch_unwind(),
            Err(payload) => return Err(panicked(tool, payload)),
        };
        let first = std::future::poll_fn(|cx| Poll::Ready(running.poll_unpin(cx))).await;
        let outcome = match first {
            Poll::Ready(outcome) => outcome,
            Poll::Pending => self.wait(tool, running, &call).await?,
        };
        match outcome {
            Ok(result) => result.map_err(CallError::from),
            Err(payload) => Err(panicked(tool, payload)),
        }
    }

    /// The rest of a call whose tool did not finish on its first poll: the tool against
    /// the deadline and the cancellation token.
    async fn wait(
        &self,
        tool: &Tool,
        running: impl Future<Output = Outcome> + Unpin,
        call: &Call<'_>,
    ) -> Result<Outcome, CallError> {
        let deadline = call
            .deadline
            .unwrap_or_else(|| Instant::now() + self.limits.default_timeout);
        let cancelled = async {
            match call.cancel {
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
fn timed_out(tool: &Tool) -> CallError {
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
fn cancelled_call(tool: &Tool) -> CallError {
    CallError::new(
        CallErrorKind::Cancelled,
        format!("the call of `{}` was cancelled", tool.wire_name()),
    )
}
