//! A conversation's history: the messages a turn sends its model, as the engine keeps
//! them (and stores them), whichever provider answered.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The channel name of a turn of the HTTP turn route
/// ([`Turn::via`](crate::Turn::via)): a linked channel may not take it.
pub const API_CHANNEL: &str = "api";

/// The channel name of a turn of the command line ([`Turn::via`](crate::Turn::via)): a
/// linked channel may not take it.
pub const CLI_CHANNEL: &str = "cli";

/// The subscriber of a turn whose caller names none (the turn route without
/// `subscriber`): everyone's, so it is handed no one's OAuth grants.
pub const ANONYMOUS_SUBSCRIBER: &str = "anonymous";

/// One message of a conversation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// What the user wrote.
    User {
        /// The text.
        content: String,
    },
    /// What the model answered in one step: text, tool calls, or both.
    Assistant {
        /// The text (may be empty).
        content: String,
        /// The tools it called, in its order.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
        /// Provider fields the engine does not know, by wire ([`Wire::as_str`]): sent back
        /// verbatim to the same wire, and to no other.
        ///
        /// [`Wire::as_str`]: crate::provider::Wire::as_str
        #[serde(default, skip_serializing_if = "Map::is_empty")]
        extra: Map<String, Value>,
    },
    /// The answer to one tool call.
    Tool {
        /// The call's id, as the model gave it.
        call_id: String,
        /// The tool's wire name.
        name: String,
        /// How the call ended.
        status: ToolStatus,
        /// What the model reads: the tool's output, or the error.
        content: String,
    },
}

impl Message {
    /// The user's message `content`.
    pub fn user(content: impl Into<String>) -> Self {
        Self::User {
            content: content.into(),
        }
    }

    /// An assistant message, with the fields of `wire` the engine does not know.
    pub fn assistant(
        content: String,
        tool_calls: Vec<ToolCall>,
        wire: &str,
        unknown: Map<String, Value>,
    ) -> Self {
        let mut extra = Map::new();
        if !unknown.is_empty() {
            extra.insert(wire.to_owned(), Value::Object(unknown));
        }
        Self::Assistant {
            content,
            tool_calls,
            extra,
        }
    }
}

/// A tool call, as the model made it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call's id: its answer carries it.
    pub id: String,
    /// The tool's wire name (`acme__book_appointment`).
    pub name: String,
    /// The arguments, as the model wrote them (JSON text): sent back as they were.
    pub arguments: String,
    /// Provider fields of the call the engine does not know (such as Gemini's
    /// `extra_content` with its thought signature), sent back verbatim.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub extra: Map<String, Value>,
}

/// How a tool call ended. Every call gets exactly one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolStatus {
    /// The tool ran and answered.
    Ok,
    /// The call failed: an unknown tool, invalid arguments, the tool's own error, a
    /// panic, or an identical call repeated past the turn's cap.
    Error,
    /// The tool did not finish within its timeout, or the turn's deadline.
    TimedOut,
    /// The turn was cancelled before the tool finished.
    Cancelled,
    /// A limit of the turn (tool calls per turn) left it unrun.
    Skipped,
}

impl ToolStatus {
    /// Its name on the wire (`timed_out`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Error => "error",
            Self::TimedOut => "timed_out",
            Self::Cancelled => "cancelled",
            Self::Skipped => "skipped",
        }
    }
}
