//! Seed 002's NDJSON wire, for clients written to it (`?wire=rojo` on the turn route):
//! `{"type":"CHAT","text"}` for each piece of the reply, `{"type":"TOOL_CALL","name",
//! "args"}` when a call starts, `{"type":"TOOL_RESULT","name","result"}` when it ends,
//! and `{"type":"DONE"}` last. Nothing else is sent: staged actions show only as their
//! calls, and a turn that ends without an answer says why in the `DONE` line's one
//! addition, `error` (absent when the model answered, so that an answered turn is the
//! seed's wire byte for byte).

use std::collections::HashMap;

use engine_core::conversation::ToolStatus;
use engine_core::{Stop, TurnEvent};
use serde::Serialize;
use serde_json::value::RawValue;

/// One line of the wire.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "SCREAMING_SNAKE_CASE")]
enum Line<'e> {
    Chat {
        text: &'e str,
    },
    ToolCall {
        name: &'e str,
        args: &'e RawValue,
    },
    ToolResult {
        name: String,
        /// What the model read, as text: the tool's output, or `{"error": "..."}`.
        result: String,
    },
    Done {
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
}

/// A turn's events as seed 002's lines: it keeps each call's tool, which a result
/// carries only by the call's id, and the last error, for the `DONE` line.
#[derive(Default)]
pub(super) struct RojoWire {
    tools: HashMap<String, String>,
    error: Option<String>,
    /// Whether a `CHAT` line was sent: a turn that stopped at a limit with no room for a
    /// request (the spend cap) sends none.
    chatted: bool,
}

impl RojoWire {
    /// `event` as a line of the wire, newline included; `None` for an event the wire
    /// has no line for.
    pub(super) fn line(&mut self, event: &TurnEvent) -> Option<String> {
        let line = match event {
            TurnEvent::Chat { text } => {
                self.chatted = true;
                Line::Chat { text }
            }
            TurnEvent::ToolCall {
                id,
                tool,
                arguments,
                ..
            } => {
                self.tools.insert(id.clone(), tool.clone());
                Line::ToolCall {
                    name: tool,
                    args: arguments,
                }
            }
            TurnEvent::ToolResult {
                id,
                status,
                result,
                error,
                ..
            } => Line::ToolResult {
                // A result always follows its call; one that did not would be a line the
                // seed's client cannot place, so none is sent.
                name: self.tools.remove(id)?,
                result: match (status, result, error) {
                    (ToolStatus::Ok, Some(result), _) => result.get().to_owned(),
                    (status, _, error) => serde_json::json!({
                        "error": error.as_deref().unwrap_or(status.as_str())
                    })
                    .to_string(),
                },
            },
            TurnEvent::Error { message } => {
                self.error = Some(message.clone());
                return None;
            }
            TurnEvent::Done { stop, .. } => {
                let why = unanswered(stop).or_else(|| {
                    (!self.chatted).then(|| "the turn ended without an answer".to_owned())
                });
                Line::Done {
                    error: why.map(|why| self.error.take().unwrap_or(why)),
                }
            }
            _ => return None,
        };
        let mut text = serde_json::to_string(&line).expect("a line serializes");
        text.push('\n');
        Some(text)
    }
}

/// Why a turn that ended at `stop` sent no answer; `None` when it sent one (the model's,
/// or a hook's in its place).
fn unanswered(stop: &Stop) -> Option<String> {
    match stop {
        Stop::Answered
        | Stop::Limit { .. }
        | Stop::Halted { .. }
        | Stop::Replaced { .. }
        | Stop::FailedClosed { .. } => None,
        Stop::Deadline => Some("the turn's deadline passed".to_owned()),
        Stop::Cancelled => Some("the turn was cancelled".to_owned()),
        Stop::Failed { message } | Stop::ProviderError { message } | Stop::Busy { message } => {
            Some(message.clone())
        }
        // A stop added later: its reason, as the engine's own wire names it.
        other => Some(serde_json::to_value(other).map_or_else(
            |_| "the turn ended without an answer".to_owned(),
            |stop| stop["reason"].as_str().unwrap_or_default().to_owned(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use engine_core::provider::Usage;

    use super::*;

    fn raw(json: &str) -> Box<RawValue> {
        RawValue::from_string(json.to_owned()).unwrap()
    }

    fn done(stop: Stop) -> TurnEvent {
        TurnEvent::Done {
            stop,
            usage: Usage::default(),
            cost_usd: 0.0,
            model_requests: 1,
        }
    }

    #[test]
    fn each_event_is_the_seeds_line_and_a_result_carries_its_calls_tool() {
        let mut wire = RojoWire::default();
        let call = |id: &str, tool: &str| TurnEvent::ToolCall {
            id: id.to_owned(),
            tool: tool.to_owned(),
            tool_id: None,
            arguments: raw(r#"{"path":"docs/intro"}"#),
            dev_session: None,
        };
        let lines: Vec<Option<String>> = vec![
            wire.line(&call("c1", "create_directory")),
            wire.line(&call("c2", "get_text_content")),
            // Results in the order calls end: the second first.
            wire.line(&TurnEvent::ToolResult {
                id: "c2".into(),
                status: ToolStatus::Error,
                result: None,
                error: Some("`..` is not allowed".into()),
                duration_ms: 1,
            }),
            wire.line(&TurnEvent::ToolResult {
                id: "c1".into(),
                status: ToolStatus::Ok,
                result: Some(raw(r#"{"ok":true,"created":true}"#)),
                error: None,
                duration_ms: 2,
            }),
            wire.line(&TurnEvent::Chat {
                text: "Done.".into(),
            }),
            wire.line(&done(Stop::Answered)),
        ];
        let expected = [
            r#"{"type":"TOOL_CALL","name":"create_directory","args":{"path":"docs/intro"}}"#,
            r#"{"type":"TOOL_CALL","name":"get_text_content","args":{"path":"docs/intro"}}"#,
            r#"{"type":"TOOL_RESULT","name":"get_text_content","result":"{\"error\":\"`..` is not allowed\"}"}"#,
            r#"{"type":"TOOL_RESULT","name":"create_directory","result":"{\"ok\":true,\"created\":true}"}"#,
            r#"{"type":"CHAT","text":"Done."}"#,
            r#"{"type":"DONE"}"#,
        ];
        let lines: Vec<String> = lines.into_iter().map(Option::unwrap).collect();
        assert_eq!(lines, expected.map(|line| format!("{line}\n")));
        // A result of no call seen sends nothing: the seed's client could not place it.
        let orphan = TurnEvent::ToolResult {
            id: "c9".into(),
            status: ToolStatus::Skipped,
            result: None,
            error: None,
            duration_ms: 0,
        };
        assert_eq!(wire.line(&orphan), None);
    }

    #[test]
    fn a_turn_without_an_answer_says_why_in_its_done_line_and_other_events_send_nothing() {
        let mut wire = RojoWire::default();
        assert_eq!(
            wire.line(&TurnEvent::Error {
                message: "the provider failed: 500".into()
            }),
            None
        );
        assert_eq!(
            wire.line(&done(Stop::ProviderError {
                message: "500 upstream".into()
            }))
            .unwrap(),
            "{\"type\":\"DONE\",\"error\":\"the provider failed: 500\"}\n"
        );
        assert_eq!(
            wire.line(&done(Stop::Deadline)).unwrap(),
            "{\"type\":\"DONE\",\"error\":\"the turn's deadline passed\"}\n"
        );
        // A limit that left no room for a request: no CHAT line, and DONE says why.
        let mut capped = RojoWire::default();
        capped.line(&TurnEvent::Error {
            message: "the spend cap left no room".into(),
        });
        assert_eq!(
            capped
                .line(&done(Stop::Limit {
                    limit: engine_core::Limit::Spend
                }))
                .unwrap(),
            "{\"type\":\"DONE\",\"error\":\"the spend cap left no room\"}\n"
        );
        assert_eq!(
            wire.line(&TurnEvent::ActionDropped {
                id: "c1".into(),
                action: "acme:log".into(),
                reason: "replaced".into()
            }),
            None
        );
    }
}
