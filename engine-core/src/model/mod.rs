//! Model access for tools: a gateway the engine brings, metered per turn.
//!
//! A tool asks by tier; the engine's [`ModelGateway`] picks the agent's model and answers
//! with the reply and its cost. [`TurnSpend`] records every call and refuses calls once
//! the turn's spend reaches the agent's cap; each call also stops at the tool's deadline
//! or when the call is cancelled.

use std::sync::{Arc, Mutex};

#[cfg(feature = "http")]
mod openai;

use plugin_sdk::engine::{BoxFuture, ModelAccess};
use plugin_sdk::model::{ChatReply, ChatRequest, ModelError, Tier};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// A gateway's answer: the text, which model gave it, and what it cost.
#[derive(Clone, Debug, PartialEq)]
pub struct GatewayReply {
    /// The reply.
    pub text: String,
    /// The model that answered.
    pub model: String,
    /// Its cost, in US dollars.
    pub cost_usd: f64,
}

#[cfg(feature = "http")]
pub use openai::OpenAiCompatibleGateway;

/// Where model calls go: the engine's connection to its providers. A tool never sees it.
pub trait ModelGateway: Send + Sync {
    /// Answers `request` with the model of its tier, or says why not.
    fn chat<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<GatewayReply, GatewayError>>;
}

/// Why a gateway gave no reply.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GatewayError {
    /// The gateway has no model for the tier asked for.
    #[error("the gateway serves no `{}` tier", .0.as_str())]
    NoTier(Tier),
    /// The provider could not be reached.
    #[error("cannot reach {authority}: {reason}")]
    Unreachable {
        /// Where the provider was looked for.
        authority: String,
        /// What the connection said.
        reason: String,
    },
    /// The provider answered with an error status.
    #[error("the provider answered {status}: {body}")]
    Status {
        /// The HTTP status.
        status: u16,
        /// The start of the answer's body.
        body: String,
    },
    /// The answer could not be read.
    #[error("the provider's answer is unusable: {0}")]
    Answer(String),
    /// The gateway's URL is not one this gateway speaks.
    #[error("the gateway URL `{0}` is not http://host:port/path")]
    Url(String),
}

/// One recorded model call.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelCall {
    /// The tool that asked.
    pub tool: String,
    /// The tier it asked for.
    pub tier: Tier,
    /// The model that answered.
    pub model: String,
    /// The cost, in US dollars.
    pub cost_usd: f64,
}

/// What a turn spent on model calls from tools, against the agent's cap.
#[derive(Debug)]
pub struct TurnSpend {
    cap_usd: f64,
    calls: Mutex<Vec<ModelCall>>,
}

impl TurnSpend {
    /// A turn allowed to spend `cap_usd`.
    pub(crate) fn new(cap_usd: f64) -> Self {
        Self {
            cap_usd,
            calls: Mutex::default(),
        }
    }

    /// What the turn spent so far.
    pub fn spent_usd(&self) -> f64 {
        self.lock().iter().map(|call| call.cost_usd).sum()
    }

    /// Every model call of the turn, in order.
    pub fn calls(&self) -> Vec<ModelCall> {
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<ModelCall>> {
        self.calls
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// One tool call's model access: its gateway, its turn's meter, its deadline and token.
pub(crate) struct MeteredModel {
    pub(crate) gateway: Arc<dyn ModelGateway>,
    pub(crate) spend: Arc<TurnSpend>,
    pub(crate) tool: String,
    pub(crate) deadline: Instant,
    pub(crate) cancel: CancellationToken,
}

impl ModelAccess for MeteredModel {
    fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatReply, ModelError>> {
        Box::pin(async move {
            let spent = self.spend.spent_usd();
            if spent >= self.spend.cap_usd {
                return Err(ModelError::SpendCapReached {
                    cap_usd: self.spend.cap_usd,
                    spent_usd: spent,
                });
            }
            let reply = tokio::select! {
                reply = self.gateway.chat(&request) => reply.map_err(|error| ModelError::Gateway(error.to_string()))?,
                () = tokio::time::sleep_until(self.deadline) => return Err(ModelError::TimedOut),
                () = self.cancel.cancelled() => return Err(ModelError::Cancelled),
            };
            // A call that crosses the cap is already paid for: it answers, and the
            // turn's next call is refused.
            tracing::info!(
                target: "model",
                tool = %self.tool,
                tier = request.tier.as_str(),
                model = %reply.model,
                cost_usd = reply.cost_usd,
                "model call"
            );
            self.spend.lock().push(ModelCall {
                tool: self.tool.clone(),
                tier: request.tier,
                model: reply.model,
                cost_usd: reply.cost_usd,
            });
            Ok(ChatReply { text: reply.text })
        })
    }
}
