//! Model access for tools: a gateway the engine brings, metered per turn.
//!
//! A tool asks by tier; the engine's [`ModelGateway`] picks the agent's model and answers
//! with the reply and its cost. Before a call runs, its worst case (the gateway's
//! [`ModelGateway::worst_case_usd`]) is reserved on the turn's, the session's and the
//! agent's caps in one step under each cap's lock, so concurrent calls never pass a cap,
//! and refused when one has no room; each call also stops at the tool's deadline or when
//! it is cancelled, and is then charged its worst case.

use std::sync::Arc;

mod spend;

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

pub use spend::{MemorySpendLedger, SharedWindow, SpendLedger, WindowReservation};
pub(crate) use spend::{Meter, RequestSpend};
pub use spend::{ModelCall, TurnSpend};

/// Where model calls go: the engine's connection to its providers. A tool never sees it.
pub trait ModelGateway: Send + Sync {
    /// Answers `request` with the model of its tier, or says why not.
    fn chat<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<GatewayReply, GatewayError>>;

    /// The most `request` may cost, in US dollars: reserved on every spend cap before
    /// [`chat`](Self::chat) runs. It must bound the reply's cost, so a gateway sends the
    /// output bound it prices to the provider; [`max_input_tokens`] bounds the input.
    fn worst_case_usd(&self, request: &ChatRequest) -> Result<f64, GatewayError>;
}

/// Tokens of role markup a provider may add per message, beyond its text.
pub const TOKENS_PER_MESSAGE: u64 = 16;

/// An upper bound of the input tokens of `request`: a tokenizer's token covers at least one
/// byte of text (byte-level BPE, as every major provider uses), so the text's bytes bound
/// its tokens, plus [`TOKENS_PER_MESSAGE`] for each message, the system's and the reply's.
pub fn max_input_tokens(request: &ChatRequest) -> u64 {
    let system = request
        .system
        .as_ref()
        .map_or(0, |system| system.len() as u64);
    let messages: u64 = request
        .messages
        .iter()
        .map(|message| message.content.len() as u64)
        .sum();
    let framed = request.messages.len() as u64 + 2;
    system + messages + framed * TOKENS_PER_MESSAGE
}

/// Why a gateway gave no reply.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GatewayError {
    /// The gateway has no model for the tier asked for.
    #[error("the gateway serves no `{}` tier", .0.as_str())]
    NoTier(Tier),
    /// The provider could not be reached: nothing was sent.
    #[error("cannot reach {authority}: {reason}")]
    Unreachable {
        /// Where the provider was looked for.
        authority: String,
        /// What the connection said.
        reason: String,
    },
    /// The connection broke after the request was sent.
    #[error("the connection to {authority} broke: {reason}")]
    Broken {
        /// The provider.
        authority: String,
        /// What the connection said.
        reason: String,
    },
    /// The provider's answer was longer than the gateway reads.
    #[error("the provider's answer is longer than {limit} bytes (`max_response_bytes`)")]
    TooLarge {
        /// The most the gateway reads, in bytes.
        limit: usize,
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
    #[error("the gateway URL `{0}` is not http://host:port/path or https://host/path")]
    Url(String),
}

impl GatewayError {
    /// Whether the provider may have run the model before this failure, so the call is
    /// charged what it may have cost: yes once the request was sent, unless the provider
    /// refused it with a client error status. A server error or a timeout status (5xx,
    /// 408) may come from a proxy whose upstream model already ran and billed.
    pub fn may_have_cost(&self) -> bool {
        match self {
            Self::Broken { .. } | Self::TooLarge { .. } | Self::Answer(_) => true,
            Self::Status { status, .. } => *status >= 500 || *status == 408,
            Self::NoTier(_) | Self::Unreachable { .. } | Self::Url(_) => false,
        }
    }
}

/// One tool call's model access: its gateway, its turn's meters, its deadline and token.
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
            // A call past its deadline or cancelled is not sent, so not charged.
            if self.cancel.is_cancelled() {
                return Err(ModelError::Cancelled);
            }
            if Instant::now() >= self.deadline {
                return Err(ModelError::TimedOut);
            }
            let worst_usd = self
                .gateway
                .worst_case_usd(&request)
                .map_err(gateway_error)?;
            // A gateway is public API: a worst case that is not an amount of dollars would
            // free room on every cap instead of taking it.
            if !(worst_usd.is_finite() && worst_usd >= 0.0) {
                return Err(ModelError::Gateway(format!(
                    "the gateway priced the call's worst case at {worst_usd} US dollars"
                )));
            }
            // Dropped with this future (the dispatch's deadline fired first), the
            // reservation charges the worst case: the provider may have answered.
            let reservation = self.spend.reserve(&self.tool, request.tier, worst_usd)?;
            let shared = match self.spend.shared_window() {
                Some(window) => match window.reserve(worst_usd).await {
                    Ok(shared) => Some(shared),
                    Err(refused) => {
                        reservation.settle(None, 0.0);
                        return Err(refused);
                    }
                },
                None => None,
            };
            let reply = tokio::select! {
                reply = self.gateway.chat(&request) => reply,
                () = tokio::time::sleep_until(self.deadline) => return Err(ModelError::TimedOut),
                () = self.cancel.cancelled() => return Err(ModelError::Cancelled),
            };
            let reply = match reply {
                Ok(reply) => reply,
                Err(error) => {
                    let charged = if error.may_have_cost() {
                        worst_usd
                    } else {
                        0.0
                    };
                    reservation.settle(None, charged);
                    if let Some(shared) = shared {
                        shared.settle(charged).await;
                    }
                    return Err(gateway_error(error));
                }
            };
            if reply.cost_usd > worst_usd {
                tracing::warn!(
                    target: "model",
                    tool = %self.tool,
                    cost_usd = reply.cost_usd,
                    worst_usd,
                    "a model call cost more than its worst case: does the provider honour `max_tokens`?"
                );
            }
            tracing::info!(
                target: "model",
                tool = %self.tool,
                tier = request.tier.as_str(),
                model = %reply.model,
                cost_usd = reply.cost_usd,
                "model call"
            );
            let cost_usd = reservation.settle(Some(reply.model), reply.cost_usd);
            if let Some(shared) = shared {
                shared.settle(cost_usd).await;
            }
            Ok(ChatReply { text: reply.text })
        })
    }
}

fn gateway_error(error: GatewayError) -> ModelError {
    ModelError::Gateway(error.to_string())
}
