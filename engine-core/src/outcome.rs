//! How a turn ended: why ([`Stop`], with the [`Limit`] that cut it), and what it did
//! ([`TurnSummary`]), as a turn's `done` event says and the conversation store keeps it.

use std::borrow::Cow;

use plugin_sdk::engine::{Redact, RedactValues};
use serde::Serialize;

use crate::provider::Usage;

/// Why a turn ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Stop {
    /// The model answered.
    Answered,
    /// A limit was reached; the model was then asked to answer without tools, and its
    /// answer is the reply.
    Limit {
        /// Which: `model_requests`, `tool_calls`, `tokens` or `spend`.
        limit: Limit,
    },
    /// The turn's deadline passed.
    Deadline,
    /// The client cancelled, or went away.
    Cancelled,
    /// A hook halted the turn before the model.
    Halted {
        /// The hook.
        hook: String,
    },
    /// A hook replaced the model's reply.
    Replaced {
        /// The hook.
        hook: String,
    },
    /// A `fail_closed` hook failed: its text is the reply.
    FailedClosed {
        /// The hook.
        hook: String,
    },
    /// The engine could not run the turn: the agent has no `turn` configuration, the
    /// conversation store failed, or there was nothing to resume.
    Failed {
        /// What.
        message: String,
    },
    /// The provider failed (after its retries).
    ProviderError {
        /// What it said.
        message: String,
    },
    /// Another turn of the conversation was under way, on this replica or another: this
    /// one did nothing (no model request, nothing stored). Send it again once that one
    /// ends. Over HTTP, the route answers `409 Conflict` instead of a stream.
    Busy {
        /// Which conversation, and what to do.
        message: String,
    },
}

impl Stop {
    /// The stop with every secret redacted from its message, as it is stored and sent.
    pub(crate) fn redacted(self, redact: &RedactValues) -> Self {
        match self {
            Self::Failed { message } => Self::Failed {
                message: clean(message, redact),
            },
            Self::ProviderError { message } => Self::ProviderError {
                message: clean(message, redact),
            },
            Self::Busy { message } => Self::Busy {
                message: clean(message, redact),
            },
            other => other,
        }
    }
}

/// The most characters of a message the engine sends or stores: enough for what a
/// provider's error body says; the rest of a body of up to 4 KiB is dropped.
const MAX_MESSAGE_CHARS: usize = 600;

/// `text` redacted, then cut to [`MAX_MESSAGE_CHARS`]: in that order, so that no secret
/// is cut in two and half of it kept.
pub(crate) fn clean(text: String, redact: &RedactValues) -> String {
    let clean = match redact.redact(&text) {
        Cow::Owned(clean) => clean,
        Cow::Borrowed(_) => text,
    };
    match clean.char_indices().nth(MAX_MESSAGE_CHARS) {
        Some((end, _)) => format!("{}…", &clean[..end]),
        None => clean,
    }
}

/// The limits that end a turn gracefully.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Limit {
    /// `max_model_requests`.
    ModelRequests,
    /// `max_tool_calls`.
    ToolCalls,
    /// `max_tokens`.
    Tokens,
    /// `spend_cap_usd`: the turn's own requests, at their worst case, left no room for
    /// another one.
    Spend,
}

/// What a turn did, once it ended.
#[derive(Clone, Debug, PartialEq)]
pub struct TurnSummary {
    /// Why it ended.
    pub stop: Stop,
    /// The reply sent (empty when none).
    pub reply: String,
    /// Tokens over its model requests.
    pub usage: Usage,
    /// Their cost, in US dollars.
    pub cost_usd: f64,
    /// How many model requests it made.
    pub model_requests: u32,
}

impl TurnSummary {
    pub(crate) fn failed(message: String) -> Self {
        Self::stopped(Stop::Failed { message })
    }

    pub(crate) fn redacted(mut self, redact: &RedactValues) -> Self {
        self.stop = self.stop.redacted(redact);
        self
    }

    /// A turn that ended before it began, for `stop`.
    pub(crate) fn stopped(stop: Stop) -> Self {
        Self {
            stop,
            reply: String::new(),
            usage: Usage::default(),
            cost_usd: 0.0,
            model_requests: 0,
        }
    }
}
