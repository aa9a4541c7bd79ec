//! One step's tool calls: run at once up to the agent's cap, each answered exactly once,
//! results kept in call order while events go out in completion order.

use std::sync::Arc;
use std::time::{Duration, Instant as StdInstant};

use futures::stream::{FuturesUnordered, StreamExt};
use rustc_hash::FxHashMap;
use serde_json::Value;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::actions::{same_arguments, Action, StagedActions};
use super::events::{arguments_json, one_line, result_event, TurnEvent};
use crate::agent::Offer;
use crate::conversation::{Message, ToolCall, ToolStatus};
use crate::dispatch::{CallError, CallErrorKind};
use crate::tool::Tool;
use crate::turn::history::StepHistory;
use crate::turn::{Call, Runtime, Turn};

/// What the turn counts across its steps.
#[derive(Debug, Default)]
pub(super) struct CallCounts {
    /// Calls run so far (skipped and refused ones are not).
    pub(super) run: u32,
    /// How many times each tool ran with each arguments: parsed, so that another
    /// spacing, key order or spelling of a number is the same call (as stagings are).
    identical: FxHashMap<String, Vec<(Arguments, u32)>>,
}

/// A call's arguments, as compared with another's.
#[derive(Debug)]
enum Arguments {
    Json(Value),
    /// Text that is not JSON: only ever the same as itself.
    Text(String),
}

impl Arguments {
    fn same_as(&self, other: &Arguments) -> bool {
        match (self, other) {
            (Self::Json(a), Self::Json(b)) => same_arguments(a, b),
            (Self::Text(a), Self::Text(b)) => a == b,
            _ => false,
        }
    }
}

/// The limits of one step's calls.
pub(super) struct StepLimits<'a> {
    pub(super) max_calls: u32,
    pub(super) max_parallel: usize,
    pub(super) max_identical: u32,
    pub(super) tool_timeout: Duration,
    pub(super) deadline: Instant,
    pub(super) cancel: &'a CancellationToken,
}

/// The answer of each of `calls`, made in answer to `offer` after `history`, in their
/// order, to be appended to the history. A call of a staged action stages it in
/// `actions` instead of running it.
#[allow(clippy::too_many_arguments)]
pub(super) async fn run_calls(
    runtime: &Runtime,
    turn: &Turn,
    offer: &Offer,
    calls: &[ToolCall],
    history: &StepHistory<'_>,
    counts: &mut CallCounts,
    actions: &mut StagedActions,
    limits: StepLimits<'_>,
    events: &mut (dyn FnMut(TurnEvent) + Send),
) -> Vec<Message> {
    let base = history.len();
    let mut answers: Vec<Option<Message>> = vec![None; calls.len()];
    let mut runnable = Vec::with_capacity(calls.len());
    for (at, call) in calls.iter().enumerate() {
        events(call_event(runtime, turn, offer, call));
        // A dev session's tool replaces a linked one of its id, action or not.
        let action = match offer.dev_tool(&call.name) {
            Some(tool) => tool.is_action().then(|| Action::Dev(Arc::clone(tool))),
            None => runtime
                .offered(turn, &call.name)
                .filter(|tool| tool.is_action())
                .map(Action::Linked),
        };
        let refused = if counts.run >= limits.max_calls {
            Some((
                ToolStatus::Skipped,
                format!(
                    "not run: the turn reached its limit of {} tool calls",
                    limits.max_calls
                ),
            ))
        } else if action.is_some() {
            // An action runs nothing when called: its identical stagings are kept once,
            // and a regeneration must be able to stage it again.
            counts.run += 1;
            None
        } else {
            let parsed = match serde_json::from_str::<Value>(&call.arguments) {
                Ok(json) => Arguments::Json(json),
                Err(_) => Arguments::Text(call.arguments.clone()),
            };
            let runs = counts.identical.entry(call.name.clone()).or_default();
            let at = match runs.iter().position(|(ran, _)| ran.same_as(&parsed)) {
                Some(at) => at,
                None => {
                    runs.push((parsed, 0));
                    runs.len() - 1
                }
            };
            let seen = &mut runs[at].1;
            if *seen >= limits.max_identical {
                Some((
                    ToolStatus::Error,
                    format!(
                        "not run: this call, with these arguments, already ran {seen} time(s) in this turn; use the earlier result"
                    ),
                ))
            } else {
                *seen += 1;
                counts.run += 1;
                None
            }
        };
        match refused {
            Some((status, error)) => {
                answers[at] = Some(answer(call, status, error.clone()));
                events(result_event(call, status, None, Some(error), 0));
            }
            None => match action {
                Some(action) => {
                    let deadline = (Instant::now() + limits.tool_timeout).min(limits.deadline);
                    let bounds = (deadline, limits.cancel);
                    let (status, content) = actions
                        .stage(runtime, turn, action, call, base + at, bounds, events)
                        .await;
                    answers[at] = Some(answer(call, status, content));
                }
                None => runnable.push(at),
            },
        }
    }
    let run = |at: usize| {
        let call = &calls[at];
        // Each call's timeout runs from its own start, within the turn's deadline.
        let tool_deadline = (Instant::now() + limits.tool_timeout).min(limits.deadline);
        async move {
            let started = StdInstant::now();
            let result = runtime
                .call(
                    turn,
                    Call::new(&call.name, &call.arguments)
                        .offered_in(offer)
                        .after(history)
                        .deadline(tool_deadline)
                        .cancel_on(limits.cancel),
                )
                .await;
            (at, result, started.elapsed())
        }
    };
    let mut record = |(at, result, took): (usize, Result<String, CallError>, Duration)| {
        let call = &calls[at];
        let duration_ms = took.as_millis() as u64;
        let (status, content, event) = match result {
            Ok(output) => {
                let raw = one_line(output.clone()).ok();
                let event = result_event(call, ToolStatus::Ok, raw, None, duration_ms);
                (ToolStatus::Ok, output, event)
            }
            Err(error) => {
                let status = match error.kind() {
                    CallErrorKind::TimedOut => ToolStatus::TimedOut,
                    CallErrorKind::Cancelled => ToolStatus::Cancelled,
                    _ => ToolStatus::Error,
                };
                let event = result_event(call, status, None, Some(error.to_string()), duration_ms);
                (status, error.to_json(), event)
            }
        };
        events(event);
        answers[at] = Some(answer(call, status, content));
    };
    // In call order, at most `max_parallel` at once; an exclusive tool's call waits for
    // every running call, and runs alone.
    let mut running = FuturesUnordered::new();
    for at in runnable {
        let name = &calls[at].name;
        let exclusive = match offer.dev_tool(name) {
            Some(tool) => tool.decl().exclusive,
            None => runtime.offered(turn, name).is_some_and(Tool::exclusive),
        };
        let room = if exclusive {
            0
        } else {
            limits.max_parallel - 1
        };
        while running.len() > room {
            if let Some(done) = running.next().await {
                record(done);
            }
        }
        running.push(run(at));
        if exclusive {
            while let Some(done) = running.next().await {
                record(done);
            }
        }
    }
    while let Some(done) = running.next().await {
        record(done);
    }
    answers
        .into_iter()
        .map(|answer| answer.expect("every call is answered"))
        .collect()
}

/// A call answered without running, `status` and why: its answer, and its two events.
pub(super) fn unrun(
    runtime: &Runtime,
    turn: &Turn,
    offer: &Offer,
    call: &ToolCall,
    status: ToolStatus,
    why: &str,
) -> (Message, [TurnEvent; 2]) {
    (
        answer(call, status, why.to_owned()),
        [
            call_event(runtime, turn, offer, call),
            result_event(call, status, None, Some(why.to_owned()), 0),
        ],
    )
}

fn call_event(runtime: &Runtime, turn: &Turn, offer: &Offer, call: &ToolCall) -> TurnEvent {
    let dev = offer.dev_tool(&call.name);
    TurnEvent::ToolCall {
        id: call.id.clone(),
        tool: call.name.clone(),
        tool_id: dev
            .map(|tool| tool.id().to_owned())
            .or_else(|| {
                runtime
                    .offered(turn, &call.name)
                    .map(|tool| tool.id().to_owned())
            })
            .or_else(|| Some(offer.external_tool(&call.name)?.id().to_owned())),
        arguments: arguments_json(&call.arguments),
        dev_session: dev.map(|tool| tool.session_id().to_owned()),
    }
}

fn answer(call: &ToolCall, status: ToolStatus, content: String) -> Message {
    Message::Tool {
        call_id: call.id.clone(),
        name: call.name.clone(),
        status,
        content,
    }
}
