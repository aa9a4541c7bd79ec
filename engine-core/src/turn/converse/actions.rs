//! Staged actions in a turn. The model's call of an action stages it (checked, capped,
//! identical stagings kept once); once the turn's reply is settled, each is performed at
//! most once, recorded in the conversation store before it runs and its outcome after,
//! or dropped with the reason. Either way the call's answer in the history is rewritten
//! to say what became of it, so that no later request reads "staged" for an action that
//! was dropped, failed or done.

use std::sync::Arc;
use std::time::{Duration, Instant as StdInstant};

use serde_json::value::RawValue;
use serde_json::{json, Value};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::events::{arguments_json, json_string, one_line, result_event, TurnEvent};
use super::Progress;
use crate::conversation::{Message, ToolCall, ToolStatus};
use crate::dev::DevTool;
use crate::dispatch::{self, CallErrorKind};
use crate::stores::{ActionRecord, ActionState, Conversations};
use crate::tool::Tool;
use crate::turn::{Call, Runtime, Turn};

/// The actions staged for the reply being generated.
pub(super) struct StagedActions {
    staged: Vec<Staged>,
    /// The most one reply stages (the agent's `max_actions_per_turn`).
    max: u32,
}

/// An action a call stages: a linked one, or a dev session's, which that session
/// checks and performs.
pub(super) enum Action<'a> {
    Linked(&'a Tool),
    Dev(Arc<DevTool>),
}

impl Action<'_> {
    fn id(&self) -> &str {
        match self {
            Self::Linked(tool) => tool.id(),
            Self::Dev(tool) => tool.id(),
        }
    }

    /// Whether this is what performs `staged`: the linked action, or the same session's
    /// (a session that reconnected is another, whose staging is its own; a rebuild
    /// swapped in by the same session is not).
    fn performs(&self, staged: &Staged) -> bool {
        match (self, &staged.dev) {
            (Self::Linked(_), None) => true,
            (Self::Dev(tool), Some(staged)) => tool.session_id() == staged.session_id(),
            _ => false,
        }
    }
}

struct Staged {
    /// The call that staged it.
    call_id: String,
    /// Where the answers that promise it are in the history (its call's, and those of
    /// identical calls after it), with their call ids.
    answers: Vec<(usize, String)>,
    /// The action's id.
    action: String,
    /// The name the model called it by, which the perform calls again.
    called_as: String,
    arguments: String,
    /// The arguments parsed, to tell identical stagings apart from another key order,
    /// spacing or spelling of a number.
    parsed: Value,
    /// The session action it is, which only that session performs: not a linked action
    /// of its id, nor another session's, should the session go.
    dev: Option<Arc<DevTool>>,
}

/// What the model reads when its call staged the action.
const STAGED: &str = "staged: it will be performed once your reply is sent, if the reply passes the checks; tell the user it is being done, not that it is done";

impl StagedActions {
    /// None staged yet, and at most `max` per reply.
    pub(super) fn new(max: u32) -> Self {
        Self {
            staged: Vec::new(),
            max,
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.staged.is_empty()
    }

    /// Stages `call` of the action `tool`, at most its `max` per reply, and sends its result
    /// event; the call's answer (status and content) for the model, which will be at
    /// `position` in the history. A session's action is checked by its session, within
    /// `deadline` and `cancel`.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn stage(
        &mut self,
        runtime: &Runtime,
        turn: &Turn,
        tool: Action<'_>,
        call: &ToolCall,
        position: usize,
        (deadline, cancel): (Instant, &CancellationToken),
        events: &mut (dyn FnMut(TurnEvent) + Send),
    ) -> (ToolStatus, String) {
        let checked = match &tool {
            Action::Linked(tool) => {
                dispatch::stage(tool, &call.arguments, &runtime.registry.limits)
            }
            Action::Dev(tool) => {
                let check = Call::new(&call.name, &call.arguments)
                    .deadline(deadline)
                    .cancel_on(cancel);
                runtime.stage_dev(turn, tool, check).await
            }
        };
        if let Err(error) = checked {
            let error = error.redacted(&**turn.agent.redaction());
            events(result_event(
                call,
                ToolStatus::Error,
                None,
                Some(error.to_string()),
                0,
            ));
            return (ToolStatus::Error, error.to_json());
        }
        let action = tool.id().to_owned();
        let parsed: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
        let identical = self.staged.iter_mut().find(|staged| {
            staged.action == action
                && tool.performs(staged)
                && same_arguments(&staged.parsed, &parsed)
        });
        // Where the staging's first answer is: its record's key, which every answer
        // that promises it names.
        let (answer, staging) = if let Some(first) = identical {
            first.answers.push((position, call.id.clone()));
            (
                "already staged in this turn with these arguments: it will be performed once",
                first.answers[0].0,
            )
        } else if self.staged.len() >= self.max as usize {
            let max = self.max;
            let message = format!(
                "not staged: this turn already staged {max} action(s), the most this agent performs in one turn; tell the user this one was not done"
            );
            events(result_event(
                call,
                ToolStatus::Error,
                None,
                Some(message.clone()),
                0,
            ));
            let refused = json!({ "error": { "kind": "refused", "message": message } });
            return (ToolStatus::Error, refused.to_string());
        } else {
            self.staged.push(Staged {
                call_id: call.id.clone(),
                answers: vec![(position, call.id.clone())],
                action: action.clone(),
                called_as: call.name.clone(),
                arguments: call.arguments.clone(),
                parsed,
                dev: match tool {
                    Action::Dev(tool) => Some(tool),
                    Action::Linked(_) => None,
                },
            });
            (STAGED, position)
        };
        let content = json!({ "staged": action, "at": staging, "note": answer }).to_string();
        let raw = RawValue::from_string(content.clone()).ok();
        let identical = answer != STAGED;
        events(result_event(call, ToolStatus::Ok, raw, None, 0));
        if !identical {
            events(TurnEvent::ActionStaged {
                id: call.id.clone(),
                action,
                arguments: arguments_json(&call.arguments),
            });
        }
        (ToolStatus::Ok, content)
    }
}

/// Rewrites the answers in `history` that still say "staged" (the turn that staged them
/// ended before it settled them: the engine stopped) with what the store knows of the
/// staging each names by its position: the action's recorded state, or dropped when it
/// was never performed. Only the answers of calls of an action (`is_action`, by the name
/// called) are read: an ordinary tool's output may look like one.
pub(super) async fn settle_left_behind(
    history: &mut [Message],
    conversations: &Conversations,
    conversation: &str,
    is_action: impl Fn(&str) -> bool,
) {
    let unsettled: Vec<(usize, Unsettled)> = history
        .iter()
        .enumerate()
        .filter_map(|(at, message)| match message {
            Message::Tool { name, content, .. } if is_action(name) => {
                Some((at, unsettled_staging(content)?))
            }
            _ => None,
        })
        .collect();
    if unsettled.is_empty() {
        return;
    }
    let records = match conversations.actions(conversation).await {
        Ok(records) => records,
        Err(error) => {
            tracing::warn!(conversation, %error, "the actions of an earlier turn could not be read");
            return;
        }
    };
    for (at, staging) in unsettled {
        let Message::Tool {
            call_id,
            status,
            content,
            ..
        } = &mut history[at]
        else {
            continue;
        };
        let action = &staging.action;
        let (answer, performed) = match staging.record(&records, call_id) {
            Some(Some(record)) => (
                json!({ "action": action, "outcome": record.state, "detail": record.detail }),
                record.state == ActionState::Performed,
            ),
            Some(None) => (
                json!({ "action": action, "outcome": "dropped", "reason": "the turn that staged it ended before its reply was settled" }),
                false,
            ),
            None => (
                json!({ "action": action, "outcome": "unknown", "reason": "the turn that staged it ended before its reply was settled, and whether it was performed is not known" }),
                false,
            ),
        };
        if !performed {
            *status = ToolStatus::Error;
        }
        *content = answer.to_string();
        if let Err(error) = conversations
            .replace_answer(conversation, at, &history[at])
            .await
        {
            tracing::warn!(conversation, %error, "an action's answer could not be rewritten");
        }
    }
}

/// An answer that staged an action (or repeated a staging) and was never settled.
struct Unsettled {
    action: String,
    /// The position of the staging's first answer, which its record holds.
    at: Option<u64>,
}

impl Unsettled {
    /// The staging's record among `records`, if one was made (`Some(None)`: none was,
    /// so it was never performed); `None` when which record is its cannot be told. An
    /// answer kept before answers named their staging (by the call `call_id`) has the
    /// record of that call id kept before records had positions, if exactly one is.
    fn record<'a>(
        &self,
        records: &'a [ActionRecord],
        call_id: &str,
    ) -> Option<Option<&'a ActionRecord>> {
        if let Some(position) = self.at {
            return Some(
                records
                    .iter()
                    .find(|record| record.position == Some(position)),
            );
        }
        let mut legacy = records
            .iter()
            .filter(|record| record.position.is_none() && record.call_id == call_id);
        match (legacy.next(), legacy.next()) {
            (Some(record), None) => Some(Some(record)),
            _ => None,
        }
    }
}

/// The staging `content` promises, if it is an answer that staged an action and was
/// never settled (a settled one names its `action` and `outcome` instead).
fn unsettled_staging(content: &str) -> Option<Unsettled> {
    let answer: Value = serde_json::from_str(content).ok()?;
    Some(Unsettled {
        action: answer.get("staged")?.as_str()?.to_owned(),
        at: answer.get("at").and_then(Value::as_u64),
    })
}

/// Drops every action staged in `progress`, for `reason`.
pub(super) async fn drop_staged(
    progress: &mut Progress<'_, '_>,
    store: Option<(&Conversations, &str)>,
    reason: &str,
) {
    for staged in std::mem::take(&mut progress.actions.staged) {
        tracing::info!(
            action = staged.action,
            reason,
            "a staged action was dropped"
        );
        let answer = json!({ "action": staged.action, "outcome": "dropped", "reason": reason });
        settle_answers(progress, store, &staged.answers, ToolStatus::Error, &answer).await;
        (progress.events)(TurnEvent::ActionDropped {
            id: staged.call_id,
            action: staged.action,
            reason: reason.to_owned(),
        });
    }
}

/// Performs every action staged in `progress`, in the order staged, each at most once:
/// recorded before it runs (an action that cannot be recorded is not run) and its outcome
/// after. A perform is neither cancelled with the turn nor retried; one that runs past
/// `timeout` is stopped, and whether it took effect is unknown.
pub(super) async fn perform_staged(
    runtime: &Runtime,
    turn: &Turn,
    store: Option<(&Conversations, &str)>,
    timeout: Duration,
    progress: &mut Progress<'_, '_>,
) {
    let (Some((conversations, _)), Some(subscriber), Some(mut held)) =
        (store, turn.subscriber(), progress.held.take())
    else {
        drop_staged(
            progress,
            store,
            "an action is performed only in a conversation",
        )
        .await;
        return;
    };
    for staged in std::mem::take(&mut progress.actions.staged) {
        let record = ActionRecord {
            id: 0,
            call_id: staged.call_id.clone(),
            position: Some(staged.answers[0].0 as u64),
            action: staged.action.clone(),
            arguments: staged.arguments.clone(),
            subscriber: subscriber.to_owned(),
            state: ActionState::Performing,
            detail: None,
        };
        let id = match conversations.record_action(held.lease(), record).await {
            Ok(id) => id,
            Err(error) => {
                tracing::error!(action = staged.action, %error, "a staged action was not performed: it could not be recorded first");
                let reason = "not performed: it could not be recorded first";
                let answer =
                    json!({ "action": staged.action, "outcome": "dropped", "reason": reason });
                settle_answers(progress, store, &staged.answers, ToolStatus::Error, &answer).await;
                (progress.events)(TurnEvent::ActionDropped {
                    id: staged.call_id,
                    action: staged.action,
                    reason: reason.into(),
                });
                continue;
            }
        };
        let started = StdInstant::now();
        let call = Call::new(&staged.called_as, &staged.arguments)
            .deadline(Instant::now() + timeout)
            .perform(staged.dev.as_ref());
        let result = runtime.call(turn, call).await;
        let duration_ms = started.elapsed().as_millis() as u64;
        let (state, detail, answer, event) = match result {
            Ok(output) => {
                let result = one_line(output.clone()).unwrap_or_else(|_| json_string(&output));
                let answer =
                    json!({ "action": staged.action, "outcome": "performed", "result": &result });
                let event = TurnEvent::ActionPerformed {
                    id: staged.call_id.clone(),
                    action: staged.action.clone(),
                    result,
                    duration_ms,
                };
                (ActionState::Performed, output, answer, event)
            }
            Err(error) => {
                // A timeout or a panic may come after the effect: whether it happened is
                // not known.
                let state = match error.kind() {
                    CallErrorKind::TimedOut
                    | CallErrorKind::Panicked
                    | CallErrorKind::Disconnected => ActionState::Unknown,
                    _ => ActionState::Failed,
                };
                let outcome = if state == ActionState::Unknown {
                    "unknown"
                } else {
                    "failed"
                };
                tracing::warn!(action = staged.action, %error, outcome, "a staged action did not succeed; it is not retried");
                let answer = json!({ "action": staged.action, "outcome": outcome, "error": error.to_string() });
                let event = TurnEvent::ActionFailed {
                    id: staged.call_id.clone(),
                    action: staged.action.clone(),
                    outcome,
                    error: error.to_string(),
                };
                (state, error.to_string(), answer, event)
            }
        };
        if let Err(error) = conversations.settle_action(id, state, Some(detail)).await {
            tracing::error!(action = staged.action, %error, "a staged action's outcome could not be recorded");
        }
        let status = match state {
            ActionState::Performed => ToolStatus::Ok,
            _ => ToolStatus::Error,
        };
        settle_answers(progress, store, &staged.answers, status, &answer).await;
        (progress.events)(event);
    }
    progress.held = Some(held);
}

/// Rewrites the answers at `answers` (position, call id) with `status` and `answer`, in
/// the history and, where stored, in the store (a message's position in the history is
/// its place there; the call id is checked at both).
async fn settle_answers(
    progress: &mut Progress<'_, '_>,
    store: Option<(&Conversations, &str)>,
    answers: &[(usize, String)],
    status: ToolStatus,
    answer: &Value,
) {
    for (at, call_id) in answers {
        let Some(Message::Tool {
            call_id: held,
            status: held_status,
            content,
            ..
        }) = progress.history.get_mut(*at)
        else {
            continue;
        };
        if held != call_id {
            continue;
        }
        *held_status = status;
        *content = answer.to_string();
        if let Some((conversations, conversation)) = store.filter(|_| *at < progress.stored) {
            if let Err(error) = conversations
                .replace_answer(conversation, *at, &progress.history[*at])
                .await
            {
                tracing::warn!(conversation, %error, "an action's answer could not be rewritten");
            }
        }
    }
}

/// Whether two arguments are the same (staging, or call): JSON equal, numbers by value
/// (`1` and `1.0`), and `null` as `{}` (both mean no arguments).
pub(super) fn same_arguments(a: &Value, b: &Value) -> bool {
    let empty = |value: &Value| value.is_null() || value.as_object().is_some_and(|o| o.is_empty());
    if empty(a) && empty(b) {
        return true;
    }
    same_value(a, b)
}

fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        // Integers exactly (two ids near 1e18 are one f64), a float by value.
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            x.as_f64() == y.as_f64()
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_value(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(key, value)| y.get(key).is_some_and(|other| same_value(value, other)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stagings_are_the_same_whatever_the_spelling_of_their_arguments() {
        let parse = |text: &str| serde_json::from_str::<Value>(text).unwrap();
        let same = |a: &str, b: &str| same_arguments(&parse(a), &parse(b));
        assert!(same(r#"{"a":1,"b":[2.0]}"#, r#"{ "b": [2], "a": 1.0 }"#));
        assert!(same("null", "{}"));
        assert!(!same(r#"{"a":1}"#, r#"{"a":2}"#));
        assert!(!same(r#"{"a":1}"#, r#"{"a":1,"b":null}"#));
        assert!(!same(r#"{"a":"1"}"#, r#"{"a":1}"#));
        assert!(!same(
            r#"{"id":1000000000000000001}"#,
            r#"{"id":1000000000000000000}"#
        ));
    }
}
