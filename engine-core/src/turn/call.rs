//! Calling a tool through the engine: the agent's equipment, the checks, the call's
//! context, the tool, and the state it wrote.

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use plugin_sdk::engine::{BoxFuture, CallInput, Redact, RedactValues, ToolEntry};
use plugin_sdk::ToolContext;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::history::StepHistory;
use super::{Runtime, Turn};
use crate::agent::Offer;
use crate::dev::DevTool;
use crate::dispatch::{self, unknown_tool, Bounds, CallError, CallErrorKind};
use crate::external;
use crate::tool::Tool;

/// One tool call, as the model (or a client) asked for it: [`Engine::call`](crate::Engine::call) runs it.
#[derive(Clone, Copy, Debug)]
pub struct Call<'a> {
    tool: &'a str,
    pub(super) arguments: &'a str,
    pub(super) deadline: Option<Instant>,
    pub(super) cancel: Option<&'a CancellationToken>,
    /// Whether this is the perform of a staged action, which only the turn makes.
    pub(super) perform: bool,
    /// For the perform of a dev session's action, the session's tool that staged it:
    /// it performs it, whatever the agent equips by then.
    staged_by: Option<&'a Arc<DevTool>>,
    /// The step of a turn that the model made this call in: its external tools are
    /// those that step offered, not the set installed now.
    offer: Option<&'a Offer>,
    /// The conversation's messages as the model saw them when it made this call, in a
    /// turn's step: what a tool's `History` reads (elsewhere, the stored ones).
    pub(super) history: Option<&'a StepHistory<'a>>,
}

impl<'a> Call<'a> {
    /// A call of `tool` (id or wire name) with `arguments` (JSON text), under the
    /// engine's default timeout and with no cancellation.
    pub fn new(tool: &'a str, arguments: &'a str) -> Self {
        Self {
            tool,
            arguments,
            deadline: None,
            cancel: None,
            perform: false,
            staged_by: None,
            offer: None,
            history: None,
        }
    }

    /// The same call, performing the staged action it names (after the reply): the
    /// linked one, or `staged_by`, the dev session's that staged it.
    pub(super) fn perform(mut self, staged_by: Option<&'a Arc<DevTool>>) -> Self {
        self.perform = true;
        self.staged_by = staged_by;
        self
    }

    /// The same call, made in answer to `offer`: an external tool it did not list is
    /// unknown.
    pub(super) fn offered_in(mut self, offer: &'a Offer) -> Self {
        self.offer = Some(offer);
        self
    }

    /// The same call, made after `history` (the turn's messages up to it).
    pub(super) fn after(mut self, history: &'a StepHistory<'a>) -> Self {
        self.history = Some(history);
        self
    }

    /// The same call, stopped at `deadline`; model calls it makes stop there too.
    pub fn deadline(mut self, deadline: Instant) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// The same call, stopped when `token` is cancelled (the turn was abandoned); model
    /// calls it makes too.
    pub fn cancel_on(mut self, token: &'a CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }
}

impl Runtime {
    /// The call of [`Engine::call`](crate::Engine::call).
    pub(crate) fn call<'a>(&'a self, turn: &'a Turn, call: Call<'a>) -> CallFuture<'a> {
        CallFuture {
            state: CallState::Start(self, turn, call),
            redact: turn.agent.redaction(),
        }
    }

    /// What the first poll of a call does: every check, then the tool if it cannot
    /// suspend, or the future that runs it.
    fn start<'a>(&'a self, turn: &'a Turn, call: Call<'a>) -> Started<'a> {
        // A dev session's tool replaces a linked one of its id, for its agent; a staged
        // action's perform runs what was staged, linked or the session's.
        let dev = match call.offer {
            _ if call.perform => call.staged_by.cloned(),
            Some(offer) => offer.dev_tool(call.tool).cloned(),
            None => turn.agent.dev_tool(call.tool),
        };
        if let Some(tool) = dev {
            return Started::Running(Box::pin(self.call_dev(turn, tool, call)));
        }
        let Some(tool) = self.offered(turn, call.tool) else {
            return self.start_external(turn, call);
        };
        if tool.is_action() && !call.perform {
            return Started::Finished(Err(dispatch::staged_not_called(tool)));
        }
        let bounds = Bounds {
            deadline: call.deadline,
            cancel: call.cancel,
            limits: &self.registry.limits,
        };
        if let Err(error) = dispatch::admit(tool, call.arguments, &bounds) {
            return Started::Finished(Err(error));
        }
        // The fast path: a tool that reads nothing of its context gets the shared empty
        // one, and its call builds and drops nothing.
        if !tool.reads_context() {
            let input = CallInput::new(call.arguments, ToolContext::empty());
            return match tool.descriptor().entry {
                ToolEntry::Ready(run) => Started::Finished(dispatch::run_ready(tool, run, input)),
                ToolEntry::Async(call_fn) => {
                    Started::Running(Box::pin(dispatch::run_async(tool, call_fn, input, bounds)))
                }
            };
        }
        match tool.descriptor().entry {
            ToolEntry::Ready(run) => {
                let context = self.context(turn, tool, &bounds, call.history);
                let result =
                    dispatch::run_ready(tool, run, CallInput::new(call.arguments, &context));
                Started::Finished(self.keep_state(turn, tool, &context, result))
            }
            ToolEntry::Async(call_fn) => Started::Running(Box::pin(async move {
                let context = self.context(turn, tool, &bounds, call.history);
                let input = CallInput::new(call.arguments, &context);
                let result = dispatch::run_async(tool, call_fn, input, bounds).await;
                self.keep_state(turn, tool, &context, result)
            })),
        }
    }

    /// A call of no linked tool: an external tool's, if the turn's agent equips one of
    /// that name (in the step's offer, else in the set installed now; the call keeps it).
    #[cold]
    fn start_external<'a>(&'a self, turn: &'a Turn, call: Call<'a>) -> Started<'a> {
        let tool = match call.offer {
            Some(offer) => offer.external_tool(call.tool),
            None => turn.agent.external_tool(call.tool),
        };
        let Some(tool) = tool else {
            return Started::Finished(Err(self.not_offered(turn, call.tool)));
        };
        let bounds = Bounds {
            deadline: call.deadline,
            cancel: call.cancel,
            limits: &self.registry.limits,
        };
        Started::Running(Box::pin(external::call(
            tool,
            call.arguments,
            turn.conversation(),
            bounds,
        )))
    }

    /// Why `name` is not called: unknown, as if it were not linked, unless the agent
    /// equips it and only the conversation is missing (an MCP session, a call without
    /// one): then the error says so, since the caller named a tool it can use elsewhere.
    fn not_offered(&self, turn: &Turn, name: &str) -> CallError {
        let equipped_elsewhere = self.registry.tool_index(name).and_then(|index| {
            let tool = &self.registry.tools()[index];
            (self.agent_of(turn).equips(index) && tool.needs_conversation()).then_some(tool)
        });
        match equipped_elsewhere {
            Some(tool) => CallError::new(
                CallErrorKind::UnknownTool,
                format!(
                    "`{}` works only in a conversation (it reads the conversation's state, identity or files), and this call is in none: the agent offers it in conversations, not over MCP or to a call outside one",
                    tool.id()
                ),
            ),
            None => unknown_tool(name),
        }
    }

    /// The tool called `name`, if `turn` is offered it.
    #[inline]
    pub(super) fn offered(&self, turn: &Turn, name: &str) -> Option<&Tool> {
        let index = self.registry.tool_index(name)?;
        let tool = &self.registry.tools()[index];
        let equipped = self.agent_of(turn).equips(index);
        let placed = turn.conversation.is_some() || !tool.needs_conversation();
        (equipped && placed).then_some(tool)
    }
}

/// The future of [`Engine::call`](crate::Engine::call).
#[must_use = "a call does nothing unless it is awaited"]
pub struct CallFuture<'a> {
    state: CallState<'a>,
    /// The engine's secrets: a tool's error text may quote one, and it goes to the model.
    redact: &'a RedactValues,
}

enum CallState<'a> {
    /// Not polled yet: nothing has run.
    Start(&'a Runtime, &'a Turn, Call<'a>),
    /// A tool that may suspend, running.
    Running(BoxFuture<'a, Result<String, CallError>>),
    /// Finished, its result given.
    Done,
}

/// What the first poll of a call leaves: the result, or a tool still running.
enum Started<'a> {
    Finished(Result<String, CallError>),
    Running(BoxFuture<'a, Result<String, CallError>>),
}

impl Future for CallFuture<'_> {
    type Output = Result<String, CallError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let redact = self.redact;
        let state = &mut self.state;
        if let CallState::Start(runtime, turn, call) = *state {
            match runtime.start(turn, call) {
                Started::Finished(result) => {
                    *state = CallState::Done;
                    return Poll::Ready(redacted(result, redact));
                }
                Started::Running(future) => *state = CallState::Running(future),
            }
        }
        match state {
            CallState::Running(future) => {
                let result = std::task::ready!(future.as_mut().poll(cx));
                *state = CallState::Done;
                Poll::Ready(redacted(result, redact))
            }
            CallState::Start(..) => unreachable!("started above"),
            CallState::Done => panic!("a CallFuture was polled after it completed"),
        }
    }
}

/// A call's result with every configured secret replaced, in an output as in an error: a
/// tool may hand back an upstream answer that quotes its key. (A secret that spans JSON
/// syntax, quotes and all, can leave the output unparseable: better than leaked.)
#[inline(always)]
fn redacted(result: Result<String, CallError>, redact: &RedactValues) -> Result<String, CallError> {
    if redact.is_empty() {
        // Most agents hold no secret: nothing to scan, nor a call to make, on the path
        // every call takes.
        return result;
    }
    scrubbed(result, redact)
}

fn scrubbed(result: Result<String, CallError>, redact: &RedactValues) -> Result<String, CallError> {
    match result {
        Ok(output) => Ok(match redact.redact(&output) {
            Cow::Owned(clean) => clean,
            Cow::Borrowed(_) => output,
        }),
        Err(error) => Err(error.redacted(redact)),
    }
}
