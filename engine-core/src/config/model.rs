//! Model access: what an agent grants its tools (`model`), and the gateway that serves
//! them (`[gateway]`).

use std::collections::BTreeMap;

use plugin_sdk::model::Tier;
use serde::Deserialize;

/// What an agent allows of model calls: three caps, each checked before a call with what
/// the call may cost at most.
///
/// ```toml
/// model = { spend_cap_usd = 0.05, session_cap_usd = 0.5, window = { cap_usd = 5.0, secs = 3600 } }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
pub struct ModelGrant {
    /// The most a turn (one `tools/call` over MCP) may spend on model calls from tools, in
    /// US dollars.
    pub spend_cap_usd: f64,
    /// The most one client session (an stdio connection; over HTTP, one request) may
    /// spend across its turns; default [`SESSION_CAP_TURNS`] times `spend_cap_usd`.
    #[serde(default)]
    pub session_cap_usd: Option<f64>,
    /// The most the agent spends over every client in a sliding window; default
    /// [`WINDOW_CAP_TURNS`] times `spend_cap_usd` per hour.
    #[serde(default)]
    pub window: Option<SpendWindow>,
}

/// A cap on an agent's spend over a sliding window of time.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
pub struct SpendWindow {
    /// The most spent within any `secs` seconds, in US dollars.
    pub cap_usd: f64,
    /// The window's length, in seconds.
    pub secs: u64,
}

/// A session's default cap, in turns' caps: no client spends without limit, even when the
/// configuration names no session cap.
pub const SESSION_CAP_TURNS: f64 = 10.0;

/// The agent's default hourly cap, in turns' caps.
pub const WINDOW_CAP_TURNS: f64 = 100.0;

impl ModelGrant {
    /// The session cap, configured or default.
    pub fn session_cap_usd(&self) -> f64 {
        self.session_cap_usd
            .unwrap_or(self.spend_cap_usd * SESSION_CAP_TURNS)
    }

    /// The window cap, configured or default.
    pub fn window(&self) -> SpendWindow {
        self.window.unwrap_or(SpendWindow {
            cap_usd: self.spend_cap_usd * WINDOW_CAP_TURNS,
            secs: 3600,
        })
    }
}

/// An OpenAI-compatible chat completions endpoint, and what each tier maps to.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct GatewayConfig {
    /// The base URL, such as `http://127.0.0.1:8000/v1` or `https://api.openai.com/v1`.
    pub base_url: String,
    /// The model and prices of each tier the gateway serves.
    pub tiers: BTreeMap<Tier, TierConfig>,
    /// The largest answer body read from the provider, in bytes; default 1 MiB. A larger
    /// one is refused, and the call charged what it may have cost.
    #[serde(default = "default_max_response_bytes")]
    pub max_response_bytes: usize,
}

fn default_max_response_bytes() -> usize {
    1 << 20
}

/// One tier's model and prices.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct TierConfig {
    /// The provider's model name.
    pub model: String,
    /// US dollars per million input tokens.
    pub usd_per_million_input: f64,
    /// US dollars per million output tokens.
    pub usd_per_million_output: f64,
    /// The longest answer, in tokens, sent to the provider as `max_tokens` (a request may
    /// ask for fewer); default 1024. With the prices it bounds what a call may cost.
    #[serde(default = "default_max_output_tokens")]
    pub max_output_tokens: u32,
}

fn default_max_output_tokens() -> u32 {
    1024
}
