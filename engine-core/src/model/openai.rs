//! A [`ModelGateway`] for OpenAI-compatible chat completions endpoints, over plain HTTP/1.1
//! (a local model server, or a proxy that holds the TLS and the provider key).

use std::collections::BTreeMap;

use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::Bytes;
use hyper::Request;
use hyper_util::rt::TokioIo;
use plugin_sdk::engine::BoxFuture;
use plugin_sdk::model::{ChatRequest, Role, Tier};
use serde::Deserialize;
use serde_json::{json, Value};

use super::{max_input_tokens, GatewayError, GatewayReply, ModelGateway};
use crate::config::{GatewayConfig, TierConfig};

/// POSTs `{base_url}/chat/completions` with the tier's model and `max_tokens`, reads at
/// most `max_response_bytes` of the answer, and prices it from its `usage`.
pub struct OpenAiCompatibleGateway {
    authority: String,
    path: String,
    tiers: BTreeMap<Tier, TierConfig>,
    max_response_bytes: usize,
}

impl OpenAiCompatibleGateway {
    /// The gateway `config` describes; its URL must be `http://host:port/path`.
    pub fn new(config: &GatewayConfig) -> Result<Self, GatewayError> {
        let rest = config
            .base_url
            .strip_prefix("http://")
            .ok_or_else(|| GatewayError::Url(config.base_url.clone()))?;
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        Ok(Self {
            authority: authority.to_owned(),
            path: format!("/{}/chat/completions", path.trim_end_matches('/')).replace("//", "/"),
            tiers: config.tiers.clone(),
            max_response_bytes: config.max_response_bytes,
        })
    }

    fn tier(&self, request: &ChatRequest) -> Result<&TierConfig, GatewayError> {
        self.tiers
            .get(&request.tier)
            .ok_or(GatewayError::NoTier(request.tier))
    }

    async fn post(&self, body: Value) -> Result<Value, GatewayError> {
        let unreachable = |reason: String| GatewayError::Unreachable {
            authority: self.authority.clone(),
            reason,
        };
        let stream = tokio::net::TcpStream::connect(&self.authority)
            .await
            .map_err(|error| unreachable(error.to_string()))?;
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|error| unreachable(error.to_string()))?;
        tokio::spawn(connection);
        let request = Request::post(&self.path)
            .header("host", &self.authority)
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(body.to_string())))
            .map_err(|error| GatewayError::Url(error.to_string()))?;
        let broken = |reason: String| GatewayError::Broken {
            authority: self.authority.clone(),
            reason,
        };
        let response = sender
            .send_request(request)
            .await
            .map_err(|error| broken(error.to_string()))?;
        let status = response.status();
        let bytes = Limited::new(response.into_body(), self.max_response_bytes)
            .collect()
            .await
            .map_err(|error| match error.downcast::<LengthLimitError>() {
                Ok(_) => GatewayError::TooLarge {
                    limit: self.max_response_bytes,
                },
                Err(error) => broken(error.to_string()),
            })?
            .to_bytes();
        if !status.is_success() {
            return Err(GatewayError::Status {
                status: status.as_u16(),
                body: String::from_utf8_lossy(&bytes).chars().take(200).collect(),
            });
        }
        serde_json::from_slice(&bytes)
            .map_err(|error| GatewayError::Answer(format!("not JSON: {error}")))
    }
}

#[derive(Deserialize)]
struct Completion {
    model: Option<String>,
    choices: Vec<Choice>,
    usage: Usage,
}

#[derive(Deserialize)]
struct Choice {
    message: Message,
}

#[derive(Deserialize)]
struct Message {
    content: String,
}

#[derive(Deserialize)]
struct Usage {
    prompt_tokens: u64,
    completion_tokens: u64,
}

impl ModelGateway for OpenAiCompatibleGateway {
    fn chat<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<GatewayReply, GatewayError>> {
        Box::pin(async move {
            let tier = self.tier(request)?;
            let mut messages = Vec::new();
            if let Some(system) = &request.system {
                messages.push(json!({ "role": "system", "content": system }));
            }
            for message in &request.messages {
                let role = match message.role {
                    Role::User => "user",
                    Role::Assistant => "assistant",
                };
                messages.push(json!({ "role": role, "content": message.content }));
            }
            let answer = self
                .post(json!({
                    "model": tier.model,
                    "messages": messages,
                    // What makes the worst case a bound: the answer is cut here.
                    "max_tokens": max_output_tokens(tier, request),
                }))
                .await?;
            let completion: Completion = serde_json::from_value(answer)
                .map_err(|error| GatewayError::Answer(format!("an unexpected shape: {error}")))?;
            let text = completion
                .choices
                .into_iter()
                .next()
                .ok_or_else(|| GatewayError::Answer("no choice".into()))?
                .message
                .content;
            let cost_usd = price(
                tier,
                completion.usage.prompt_tokens,
                completion.usage.completion_tokens,
            );
            Ok(GatewayReply {
                text,
                model: completion.model.unwrap_or_else(|| tier.model.clone()),
                cost_usd,
            })
        })
    }

    fn worst_case_usd(&self, request: &ChatRequest) -> Result<f64, GatewayError> {
        let tier = self.tier(request)?;
        Ok(price(
            tier,
            max_input_tokens(request),
            max_output_tokens(tier, request).into(),
        ))
    }
}

/// The longest answer `request` may get: what it asks for, within the tier's most, and
/// at least one token (providers disagree on what a `max_tokens` of 0 means).
fn max_output_tokens(tier: &TierConfig, request: &ChatRequest) -> u32 {
    request
        .max_output_tokens
        .map_or(tier.max_output_tokens, |asked| {
            asked.min(tier.max_output_tokens)
        })
        .max(1)
}

fn price(tier: &TierConfig, input_tokens: u64, output_tokens: u64) -> f64 {
    input_tokens as f64 * tier.usd_per_million_input / 1e6
        + output_tokens as f64 * tier.usd_per_million_output / 1e6
}
