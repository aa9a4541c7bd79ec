//! Asking a model from a tool: by tier, through the engine's gateway, within its caps.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::BoxFuture;

/// How capable (and costly) a model the call needs. The agent maps tiers to models; a
/// tool never names a provider or a model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// Quick, cheap answers: a classification, a yes or no.
    Fast,
    /// The agent's everyday model.
    Balanced,
    /// The most capable model the agent admits.
    Deep,
}

/// Who says a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The user (or the tool, speaking for its data).
    User,
    /// The model.
    Assistant,
}

/// One message of a chat.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// Who says it.
    pub role: Role,
    /// What is said.
    pub content: String,
}

impl ChatMessage {
    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: content.into(),
        }
    }
}

/// A chat request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// The tier.
    pub tier: Tier,
    /// Instructions, if any.
    pub system: Option<String>,
    /// The conversation so far, ending with the message to answer.
    pub messages: Vec<ChatMessage>,
    /// The longest answer wanted, in tokens; `None`: the tier's configured most. The engine
    /// reserves what the call may cost before it runs, and the answer's length bounds it:
    /// a short answer (a label, a yes or no) leaves more of the turn's budget to other calls.
    #[serde(default)]
    pub max_output_tokens: Option<u32>,
}

/// A model's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChatReply {
    /// The text.
    pub text: String,
}

/// Why a chat produced no answer.
#[derive(Clone, Debug, PartialEq)]
pub enum ModelError {
    /// A spend cap (the turn's, the session's or the agent's) has no room for what the
    /// call may cost: the call was not made.
    SpendCapReached {
        /// Which cap.
        cap: SpendCap,
        /// The cap, in US dollars.
        cap_usd: f64,
        /// Spent so far under it, with what calls in flight reserved.
        spent_usd: f64,
        /// The most this call may cost (its input and its longest answer).
        call_usd: f64,
    },
    /// The tool's deadline passed first.
    TimedOut,
    /// The call was cancelled (the turn was abandoned).
    Cancelled,
    /// The gateway or the provider failed.
    Gateway(String),
}

/// The budgets model calls from tools spend from, each with its own cap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpendCap {
    /// One turn's (one `tools/call` over MCP).
    Turn,
    /// One client session's (an MCP connection), across its turns.
    Session,
    /// The agent's, over every client, in a sliding window of `secs` seconds.
    Window {
        /// The window's length, in seconds.
        secs: u64,
    },
}

impl Tier {
    /// The tier's name, as configured (`fast`, `balanced`, `deep`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Fast => "fast",
            Self::Balanced => "balanced",
            Self::Deep => "deep",
        }
    }
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::SpendCapReached {
                cap,
                cap_usd,
                spent_usd,
                call_usd,
            } => {
                let (whose, then) = match cap {
                    SpendCap::Turn => ("the turn's".to_owned(), "no more model calls in this turn"),
                    SpendCap::Session => (
                        "the session's".to_owned(),
                        "no more model calls in this session",
                    ),
                    SpendCap::Window { secs } => {
                        (format!("the agent's {secs}-second"), "try again later")
                    }
                };
                write!(
                    f,
                    "{whose} model spend cap is reached (${spent_usd:.4} of ${cap_usd:.4} spent or reserved, and this call may cost ${call_usd:.4}): {then}"
                )
            }
            Self::TimedOut => f.write_str("the model call passed the tool's deadline"),
            Self::Cancelled => f.write_str("the model call was cancelled"),
            Self::Gateway(reason) => write!(f, "the model gateway failed: {reason}"),
        }
    }
}

impl std::error::Error for ModelError {}

/// The engine's side of model access, bound to one call (its agent, turn, deadline and
/// cancellation). Implemented by the engine.
pub trait ModelAccess: Send + Sync {
    /// Answers `request`.
    fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatReply, ModelError>>;
}

/// Model access, present only when the agent grants it: take it as
/// `model: Option<Model>`.
#[derive(Clone)]
pub struct Model {
    access: Arc<dyn ModelAccess>,
}

impl Model {
    /// Model access through `access`; for engines and tests.
    pub fn new(access: Arc<dyn ModelAccess>) -> Self {
        Self { access }
    }

    /// Asks the agent's model of `request.tier`. What the call may cost at most is reserved
    /// on the turn's, the session's and the agent's spend caps before it runs (refused with
    /// [`ModelError::SpendCapReached`] when one has no room); it is then charged its price,
    /// or what it may have cost if it is stopped at the tool's deadline or cancellation.
    pub async fn chat(&self, request: ChatRequest) -> Result<ChatReply, ModelError> {
        self.access.chat(request).await
    }
}

impl fmt::Debug for Model {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Model")
    }
}
