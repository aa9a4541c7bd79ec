//! A [`ModelGateway`] for OpenAI-compatible chat completions endpoints, on the same HTTP
//! client as the turns' providers (reqwest with rustls): a hosted provider over HTTPS, a
//! local model server or a proxy over plain HTTP.

use std::collections::BTreeMap;

use plugin_sdk::engine::BoxFuture;
use plugin_sdk::model::{ChatRequest, Role, Tier};
use serde::Deserialize;
use serde_json::{json, Value};

use engine_core::config::{GatewayConfig, TierConfig};
use engine_core::model::{max_input_tokens, GatewayError, GatewayReply, ModelGateway};

/// POSTs `{base_url}/chat/completions` with the tier's model and `max_tokens`, reads at
/// most `max_response_bytes` of the answer, and prices it from its `usage`.
pub struct OpenAiCompatibleGateway {
    client: reqwest::Client,
    authority: String,
    url: String,
    tiers: BTreeMap<Tier, TierConfig>,
    max_response_bytes: usize,
}

impl OpenAiCompatibleGateway {
    /// The gateway `config` describes; its URL must be `http://` or `https://`.
    pub fn new(config: &GatewayConfig) -> Result<Self, GatewayError> {
        let rest = config
            .base_url
            .strip_prefix("http://")
            .or_else(|| config.base_url.strip_prefix("https://"))
            .ok_or_else(|| GatewayError::Url(config.base_url.clone()))?;
        let authority = rest.split('/').next().unwrap_or(rest).to_owned();
        Ok(Self {
            client: crate::shared_client(),
            authority,
            url: format!("{}/chat/completions", config.base_url.trim_end_matches('/')),
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
        let broken = |reason: String| GatewayError::Broken {
            authority: self.authority.clone(),
            reason,
        };
        let mut response = self
            .client
            .post(&self.url)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .map_err(|error| {
                let connect = error.is_connect();
                let reason = error.without_url().to_string();
                if connect {
                    GatewayError::Unreachable {
                        authority: self.authority.clone(),
                        reason,
                    }
                } else {
                    broken(reason)
                }
            })?;
        let status = response.status();
        let mut bytes = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|error| broken(error.without_url().to_string()))?
        {
            bytes.extend_from_slice(&chunk);
            if bytes.len() > self.max_response_bytes {
                return Err(GatewayError::TooLarge {
                    limit: self.max_response_bytes,
                });
            }
        }
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
