//! What a turn tells its client as it runs: the events of the NDJSON stream.

use plugin_sdk::engine::RedactValues;
use serde::Serialize;
use serde_json::value::RawValue;

use crate::conversation::{ToolCall, ToolStatus};
use crate::outcome::{clean, Stop};
use crate::provider::Usage;

/// One event of a running turn. On the wire (`application/x-ndjson`) each is one line,
/// `{"seq": N, "type": ...}`; the wire names of seed 002 map one to one (`CHAT`,
/// `TOOL_CALL`, `TOOL_RESULT`, `DONE`). A staged action's call has its `tool_call` and
/// `tool_result` (it was staged, or refused), then `action_staged`, and once the turn's
/// reply is settled one of `action_performed`, `action_failed`, `action_dropped`.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum TurnEvent {
    /// A piece of the reply's text.
    Chat {
        /// The text.
        text: String,
    },
    /// The model called a tool; its arguments are complete.
    ToolCall {
        /// The call's id: its result carries it.
        id: String,
        /// The tool's wire name, as the model called it.
        tool: String,
        /// The tool's canonical id (`acme:book_appointment`); `null` for a tool the
        /// agent does not have.
        tool_id: Option<String>,
        /// The arguments: JSON as the model wrote them, or the text when it is not JSON.
        arguments: Box<RawValue>,
        /// The dev session whose tool was called (dev mode), when one was: it replaces a
        /// linked tool of the same id. Absent for every other call.
        #[serde(skip_serializing_if = "Option::is_none")]
        dev_session: Option<String>,
    },
    /// A tool call ended. Results come in the order calls end; `id` ties each to its call.
    ToolResult {
        /// The call's id.
        id: String,
        /// How it ended.
        status: ToolStatus,
        /// The tool's output (JSON), when it ran to the end.
        #[serde(skip_serializing_if = "Option::is_none")]
        result: Option<Box<RawValue>>,
        /// Why it did not, in words the model also read.
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        /// How long it ran, in milliseconds.
        duration_ms: u64,
    },
    /// The model called a staged action: its arguments are valid, and it will be
    /// performed after the reply, if the reply passes the guardrails.
    ActionStaged {
        /// The call's id.
        id: String,
        /// The action's id (`acme:log_contact`).
        action: String,
        /// Its arguments, as the model wrote them.
        arguments: Box<RawValue>,
    },
    /// A staged action ran to the end.
    ActionPerformed {
        /// The id of the call that staged it.
        id: String,
        /// The action's id.
        action: String,
        /// Its output (JSON).
        result: Box<RawValue>,
        /// How long it ran, in milliseconds.
        duration_ms: u64,
    },
    /// A staged action ran and failed, or did not finish: it is not retried.
    ActionFailed {
        /// The id of the call that staged it.
        id: String,
        /// The action's id.
        action: String,
        /// `failed`, or `unknown` when whether it took effect is not known (it timed out,
        /// panicked, or the dev session performing it disconnected).
        outcome: &'static str,
        /// What went wrong.
        error: String,
    },
    /// A staged action was not performed: the reply it was staged for was replaced,
    /// regenerated or never sent.
    ActionDropped {
        /// The id of the call that staged it.
        id: String,
        /// The action's id.
        action: String,
        /// Why.
        reason: String,
    },
    /// The turn ended.
    Done {
        /// Why.
        stop: Stop,
        /// Tokens used over the turn's model requests.
        usage: Usage,
        /// What they cost, in US dollars.
        cost_usd: f64,
        /// How many model requests the turn made.
        model_requests: u32,
    },
    /// Something failed that the client should know; a `done` follows.
    Error {
        /// What.
        message: String,
    },
}

impl TurnEvent {
    /// The event as one line of the NDJSON stream: `{"seq":N,"type":...}` and a newline.
    pub fn ndjson_line(&self, seq: u64) -> String {
        let json = serde_json::to_string(self).expect("an event serializes");
        // Every event is an object: `{"type":...}` takes `seq` in front.
        format!("{{\"seq\":{seq},{}\n", &json[1..])
    }
}

impl TurnEvent {
    /// The event with every secret redacted from the texts the engine wrote into it: an
    /// error's message quotes what a provider or a store answered, which may quote a key
    /// (a gateway's 401 often does). Tools' outputs and errors are redacted where they are
    /// made; the model's text is its own.
    pub(super) fn redacted(self, redact: &RedactValues) -> Self {
        match self {
            Self::Error { message } => Self::Error {
                message: clean(message, redact),
            },
            Self::Done {
                stop,
                usage,
                cost_usd,
                model_requests,
            } => Self::Done {
                stop: stop.redacted(redact),
                usage,
                cost_usd,
                model_requests,
            },
            other => other,
        }
    }
}

/// A JSON value for the arguments of a call: the model's text when it is JSON, the text
/// as a string when it is not; on one line either way.
pub(super) fn arguments_json(arguments: &str) -> Box<RawValue> {
    match serde_json::from_str::<&RawValue>(arguments) {
        Ok(raw) => one_line(raw.get().to_owned()).expect("JSON stays JSON on one line"),
        Err(_) => json_string(arguments),
    }
}

/// `json` as a raw value on one line of the NDJSON stream: JSON strings escape their
/// line breaks, so a raw one can only be whitespace between tokens (a model's or a
/// command's pretty-printed output), and each becomes a space. Not JSON: the error.
pub(super) fn one_line(json: String) -> Result<Box<RawValue>, serde_json::Error> {
    let json = if json.contains(['\n', '\r']) {
        json.replace(['\n', '\r'], " ")
    } else {
        json
    };
    RawValue::from_string(json)
}

pub(super) fn json_string(text: &str) -> Box<RawValue> {
    RawValue::from_string(serde_json::to_string(text).expect("a string serializes"))
        .expect("a JSON string is JSON")
}

/// The `tool_result` event of `call`.
pub(super) fn result_event(
    call: &ToolCall,
    status: ToolStatus,
    result: Option<Box<RawValue>>,
    error: Option<String>,
    duration_ms: u64,
) -> TurnEvent {
    TurnEvent::ToolResult {
        id: call.id.clone(),
        status,
        result,
        error,
        duration_ms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pretty_printed_json_from_a_model_or_a_tool_stays_on_one_line_of_the_stream() {
        let pretty = "{\n  \"path\": \"a\\nb\",\r\n  \"days\": [1,\n 2]\n}";
        let event = TurnEvent::ToolCall {
            id: "c1".into(),
            tool: "t".into(),
            tool_id: None,
            arguments: arguments_json(pretty),
            dev_session: None,
        };
        let line = event.ndjson_line(1);
        assert_eq!(line.matches('\n').count(), 1, "{line:?}");
        assert!(line.ends_with('\n'));
        // The same value, the string's escaped line break kept.
        let sent: serde_json::Value = serde_json::from_str(&line).unwrap();
        let meant: serde_json::Value = serde_json::from_str(pretty).unwrap();
        assert_eq!(sent["arguments"], meant);
        let result = one_line("[\n1,\n2\n]".to_owned()).unwrap();
        assert_eq!(result.get(), "[ 1, 2 ]");
        assert!(
            one_line("{\n".to_owned()).is_err(),
            "not JSON stays refused"
        );
        // Text that is not JSON is sent as a string, escaped.
        assert_eq!(arguments_json("a\nb").get(), "\"a\\nb\"");
    }
}
