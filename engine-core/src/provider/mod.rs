//! Model providers: what a turn asks a model, and the two wire formats it speaks
//! (OpenAI-compatible chat completions and Anthropic's Messages API), each parsed from
//! its stream by a tolerant assembler.
//!
//! A [`Provider`] answers one [`ProviderRequest`] with one [`ProviderReply`]: the text,
//! the tool calls, the usage, and whatever the provider added that the engine does not
//! know (kept in `extra`, sent back verbatim on the next request to the same wire).
//! Text is handed to a callback as it arrives, so a turn can stream it.
//!
//! The codecs ([`openai`], [`anthropic`], [`SseSplitter`]) are public for a backend
//! crate: they build bodies and parse bytes, with no I/O, so `engine-providers` puts them
//! behind reqwest and another transport can reuse them.

pub mod anthropic;
mod drop_in;
mod fields;
pub mod openai;
mod sse;

use std::sync::Arc;

use plugin_sdk::engine::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use drop_in::ProviderFile;
pub(crate) use drop_in::{checked, key_problem, offered, DropIns};
pub use sse::SseSplitter;

use crate::config::ProviderConfig;
use crate::conversation::{Message, ToolCall};
pub use crate::format::Wire;

/// Makes the provider a `[providers.*]` table (or a drop-in file) describes, with its key.
pub type OpenProvider =
    fn(&ProviderConfig, Option<&str>) -> Result<Arc<dyn Provider>, ProviderError>;

/// What a turn asks of its model, once per step.
#[derive(Clone, Copy, Debug)]
pub struct ProviderRequest<'a> {
    /// The agent's system prompt, if it has one, then the context hooks injected.
    pub system: &'a [String],
    /// The conversation so far, the user's new message last (or the step's tool results).
    pub history: &'a [Message],
    /// The tools offered: the agent's catalog in this provider's format (a JSON array),
    /// rendered once per agent and shared.
    pub tools: &'a str,
    /// `false` on the last step a turn allows: the model must answer in words
    /// (`tool_choice: none`), so the paid round is not thrown away.
    pub allow_tools: bool,
    /// The longest reply, in tokens.
    pub max_output_tokens: u32,
}

/// What a message, or a call in one, adds to a request's tokens beside its texts, at
/// most: the few tokens a chat template spends on roles and separators.
const FRAMING_BYTES: usize = 16;

/// The bytes a request of `history` under `system` offering `tools` carries: its texts
/// (provider fields sent back verbatim included) and their framing. The turn charges
/// them as tokens before it asks (no token is shorter than a byte); a body is sized by
/// them.
pub(crate) fn request_bytes(system: &[String], history: &[Message], tools: &[u8]) -> usize {
    system
        .iter()
        .map(|text| text.len() + FRAMING_BYTES)
        .sum::<usize>()
        + tools.len()
        + history.iter().map(message_bytes).sum::<usize>()
}

/// The bytes of `message` a request carries, with its framing (provider fields sent back
/// verbatim included).
fn message_bytes(message: &Message) -> usize {
    let kept = |extra: &serde_json::Map<String, serde_json::Value>| {
        if extra.is_empty() {
            0
        } else {
            serde_json::to_string(extra).map_or(0, |text| text.len())
        }
    };
    FRAMING_BYTES
        + match message {
            Message::User { content } => content.len(),
            Message::Assistant {
                content,
                tool_calls,
                extra,
            } => {
                content.len()
                    + kept(extra)
                    + tool_calls
                        .iter()
                        .map(|call| {
                            call.id.len()
                                + call.name.len()
                                + call.arguments.len()
                                + kept(&call.extra)
                                + FRAMING_BYTES
                        })
                        .sum::<usize>()
            }
            Message::Tool {
                call_id,
                name,
                content,
                ..
            } => call_id.len() + name.len() + content.len(),
        }
}

/// `body` written as JSON, in a buffer sized for what `request` carries, and room for the
/// wire's keys: a body grown by doubling would copy the tools' schemas and the history
/// once per doubling.
fn body_json(body: &impl Serialize, request: &ProviderRequest<'_>) -> Vec<u8> {
    let carried = request_bytes(request.system, request.history, request.tools.as_bytes());
    let keys = 64 * (request.system.len() + request.history.len() + 4);
    let mut out = Vec::with_capacity(carried + keys);
    serde_json::to_writer(&mut out, body).expect("a request body serializes");
    out
}

/// What a model answered in one step.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProviderReply {
    /// Its text (empty when it only called tools).
    pub text: String,
    /// The tools it called, in its order.
    pub tool_calls: Vec<ToolCall>,
    /// Why it stopped, as the provider said it (`stop`, `tool_calls`, `end_turn`, ...);
    /// `None` when it did not say. The engine decides by whether calls are present.
    pub finish: Option<String>,
    /// What it cost in tokens.
    pub usage: Usage,
    /// Fields of the assistant message the engine does not know (reasoning content,
    /// thinking blocks), sent back verbatim on the next request.
    pub extra: Map<String, Value>,
}

impl ProviderReply {
    /// The reply as the assistant's message in the history, for provider `wire`.
    pub fn into_message(self, wire: &str) -> Message {
        Message::assistant(self.text, self.tool_calls, wire, self.extra)
    }
}

/// The most tool calls one reply may hold: a reply with more is refused as malformed
/// (each call gets an answer and a place in every later request).
pub const MAX_CALLS_PER_REPLY: usize = 256;

fn too_many_calls() -> ProviderError {
    ProviderError::Malformed(format!(
        "the reply calls more than {MAX_CALLS_PER_REPLY} tools"
    ))
}

/// The calls of a finished reply made answerable: a call without an id gets one, and an
/// id that repeats one before it gets a suffix (its answer must name it alone); a call
/// without arguments gets `{}`.
fn complete_calls(calls: &mut [ToolCall]) {
    let mut seen = std::collections::HashSet::with_capacity(calls.len());
    for (at, call) in calls.iter_mut().enumerate() {
        if call.arguments.trim().is_empty() {
            call.arguments = "{}".to_owned();
        }
        if call.id.is_empty() {
            call.id = format!("call_{at}");
        }
        while !seen.insert(call.id.clone()) {
            call.id = format!("{}_{at}", call.id);
        }
    }
}

/// Tokens used, as the provider reported them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens read.
    pub input_tokens: u64,
    /// Tokens written.
    pub output_tokens: u64,
}

impl std::ops::AddAssign for Usage {
    /// Saturating: a provider's counts are its to choose, and `u64::MAX` twice must not
    /// wrap (to a turn that used almost nothing) nor panic.
    fn add_assign(&mut self, other: Self) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
    }
}

/// Why a provider gave no reply.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProviderError {
    /// Nothing could be sent (the connection was refused or reset before an answer).
    #[error("cannot reach the provider: {0}")]
    Unreachable(String),
    /// The provider answered with an error status.
    #[error("the provider answered {status}: {body}")]
    Status {
        /// The HTTP status.
        status: u16,
        /// The start of its body.
        body: String,
        /// What `Retry-After` asked for, in milliseconds.
        retry_after_ms: Option<u64>,
    },
    /// The stream ended before the provider said it was done: no finish and no `[DONE]`
    /// (OpenAI), no `message_stop` (Anthropic). Never taken for a normal end.
    #[error("the provider's stream was cut off before its end: {0}")]
    Truncated(String),
    /// A chunk that is not what the wire format says, or an error the provider put in
    /// its stream.
    #[error("the provider's answer is unusable: {0}")]
    Malformed(String),
    /// The answer was longer than the engine reads.
    #[error("the provider's answer is longer than {0} bytes")]
    TooLarge(usize),
}

impl ProviderError {
    /// Whether asking again may help, and it is safe to: a 429, a 5xx or a 408, or a
    /// connection that failed before the first byte of an answer. A stream that broke
    /// midway is not retried: the model ran, and its reply was partly streamed.
    pub fn retryable(&self) -> bool {
        match self {
            Self::Unreachable(_) => true,
            Self::Status { status, .. } => *status == 429 || *status == 408 || *status >= 500,
            Self::Truncated(_) | Self::Malformed(_) | Self::TooLarge(_) => false,
        }
    }
}

/// A model provider. `engine-providers`'s `HttpProvider` speaks both wire formats over HTTP;
/// a test or a benchmark can bring its own.
pub trait Provider: Send + Sync {
    /// The wire format the provider speaks: which catalog its tools are rendered in, and
    /// which provider fields of the history are sent back to it.
    fn wire(&self) -> Wire;

    /// Answers `request`, handing each piece of text to `text` as it arrives.
    fn respond<'a>(
        &'a self,
        request: ProviderRequest<'a>,
        text: &'a mut (dyn FnMut(&str) + Send),
    ) -> BoxFuture<'a, Result<ProviderReply, ProviderError>>;

    /// What `usage` cost, in US dollars; default nothing (a local model).
    fn cost_usd(&self, usage: Usage) -> f64 {
        let _ = usage;
        0.0
    }
}
