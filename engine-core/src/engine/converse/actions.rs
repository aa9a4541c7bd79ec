//! Staged actions in a turn. The model's call of an action stages it (checked, capped,
//! identical stagings kept once); once the turn's reply is settled, each is performed at
//! most once, recorded in the conversation store before it runs and its outcome after,
//! or dropped with the reason.

use std::time::{Duration, Instant as StdInstant};

use serde_json::value::RawValue;
use serde_json::Value;
use tokio::time::Instant;

use super::events::{arguments_json, json_string, TurnEvent};
use crate::conversation::{ToolCall, ToolStatus};
use crate::dispatch::{self, CallErrorKind};
use crate::engine::{Call, Engine, Turn};
use crate::stores::{ActionRecord, ActionState, Conversations};
use crate::tool::Tool;

/// The actions staged for the reply being generated.
#[derive(Default)]
pub(super) struct StagedActions {
    staged: Vec<Staged>,
}

struct Staged {
    /// The call that staged it.
    call_id: String,
    /// The action's id.
    action: String,
    /// The name the model called it by, which the perform calls again.
    called_as: String,
    arguments: String,
    /// The arguments parsed, to tell identical stagings apart from a different key order
    /// or spacing.
    parsed: Value,
}

/// What the model reads when its call staged the action.
const STAGED: &str = "staged: it will be performed once your reply is sent, if the reply passes the checks; tell the user it is being done, not that it is done";

impl StagedActions {
    pub(super) fn is_empty(&self) -> bool {
        self.staged.is_empty()
    }

    /// Stages `call` of the action `tool`, at most `max` per reply, and sends its result
    /// event; the call's answer (status and content) for the model.
    pub(super) fn stage(
        &mut self,
        engine: &Engine,
        tool: &Tool,
        call: &ToolCall,
        max: u32,
        events: &mut (dyn FnMut(TurnEvent) + Send),
    ) -> (ToolStatus, String) {
        if let Err(error) = dispatch::stage(tool, &call.arguments, &engine.registry.limits) {
            let message = error.to_string();
            events(result(call, ToolStatus::Error, None, Some(message)));
            return (ToolStatus::Error, error.to_json());
        }
        let parsed: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
        let identical = self
            .staged
            .iter()
            .any(|staged| staged.action == tool.id() && staged.parsed == parsed);
        let answer = if identical {
            "already staged in this turn with these arguments: it will be performed once".to_owned()
        } else if self.staged.len() >= max as usize {
            let message = format!(
                "not staged: this turn already staged {max} action(s), the most this agent performs in one turn; tell the user this one was not done"
            );
            events(result(call, ToolStatus::Error, None, Some(message.clone())));
            let refused = serde_json::json!({ "error": { "kind": "refused", "message": message } });
            return (ToolStatus::Error, refused.to_string());
        } else {
            self.staged.push(Staged {
                call_id: call.id.clone(),
                action: tool.id().to_owned(),
                called_as: call.name.clone(),
                arguments: call.arguments.clone(),
                parsed,
            });
            STAGED.to_owned()
        };
        let content = serde_json::json!({ "staged": tool.id(), "note": answer }).to_string();
        let raw = RawValue::from_string(content.clone()).ok();
        events(result(call, ToolStatus::Ok, raw, None));
        if !identical {
            events(TurnEvent::ActionStaged {
                id: call.id.clone(),
                action: tool.id().to_owned(),
                arguments: arguments_json(&call.arguments),
            });
        }
        (ToolStatus::Ok, content)
    }

    /// Drops every staged action, for `reason`.
    pub(super) fn drop_all(&mut self, reason: &str, events: &mut (dyn FnMut(TurnEvent) + Send)) {
        for staged in self.staged.drain(..) {
            tracing::info!(
                action = staged.action,
                reason,
                "a staged action was dropped"
            );
            events(TurnEvent::ActionDropped {
                id: staged.call_id,
                action: staged.action,
                reason: reason.to_owned(),
            });
        }
    }

    /// Performs every staged action, in the order staged, each at most once: recorded
    /// before it runs (an action that cannot be recorded is not run) and its outcome
    /// after. A perform is neither cancelled with the turn nor retried; one that runs
    /// past `timeout` is stopped and its outcome is unknown.
    pub(super) async fn perform_all(
        &mut self,
        engine: &Engine,
        turn: &Turn,
        store: Option<(&Conversations, &str)>,
        timeout: Duration,
        events: &mut (dyn FnMut(TurnEvent) + Send),
    ) {
        let (Some((store, conversation)), Some(subscriber)) = (store, turn.subscriber()) else {
            self.drop_all("an action is performed only in a conversation", events);
            return;
        };
        for staged in std::mem::take(&mut self.staged) {
            let record = ActionRecord {
                id: 0,
                call_id: staged.call_id.clone(),
                action: staged.action.clone(),
                arguments: staged.arguments.clone(),
                subscriber: subscriber.to_owned(),
                state: ActionState::Performing,
                detail: None,
            };
            let id = match store.record_action(conversation, record).await {
                Ok(id) => id,
                Err(error) => {
                    tracing::error!(action = staged.action, %error, "a staged action was not performed: it could not be recorded first");
                    events(TurnEvent::ActionFailed {
                        id: staged.call_id,
                        action: staged.action,
                        outcome: "failed",
                        error: "not performed: it could not be recorded first".into(),
                    });
                    continue;
                }
            };
            let started = StdInstant::now();
            let call = Call::new(&staged.called_as, &staged.arguments)
                .deadline(Instant::now() + timeout)
                .perform();
            let result = engine.call(turn, call).await;
            let duration_ms = started.elapsed().as_millis() as u64;
            let (state, detail, event) = match result {
                Ok(output) => {
                    let result = RawValue::from_string(output.clone())
                        .unwrap_or_else(|_| json_string(&output));
                    let event = TurnEvent::ActionPerformed {
                        id: staged.call_id,
                        action: staged.action.clone(),
                        result,
                        duration_ms,
                    };
                    (ActionState::Performed, output, event)
                }
                Err(error) => {
                    let state = match error.kind() {
                        CallErrorKind::TimedOut => ActionState::Unknown,
                        _ => ActionState::Failed,
                    };
                    tracing::warn!(action = staged.action, %error, "a staged action failed; it is not retried");
                    let event = TurnEvent::ActionFailed {
                        id: staged.call_id,
                        action: staged.action.clone(),
                        outcome: if state == ActionState::Unknown {
                            "unknown"
                        } else {
                            "failed"
                        },
                        error: error.to_string(),
                    };
                    (state, error.to_string(), event)
                }
            };
            if let Err(error) = store.settle_action(id, state, Some(detail)).await {
                tracing::error!(action = staged.action, %error, "a staged action's outcome could not be recorded");
            }
            events(event);
        }
    }
}

fn result(
    call: &ToolCall,
    status: ToolStatus,
    result: Option<Box<RawValue>>,
    error: Option<String>,
) -> TurnEvent {
    TurnEvent::ToolResult {
        id: call.id.clone(),
        status,
        result,
        error,
        duration_ms: 0,
    }
}
