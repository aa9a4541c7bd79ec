//! How agents run turns: the model providers, and each agent's limits.

use serde::Deserialize;

use crate::config::SpendWindow;
use crate::format::Wire;

/// A model provider agents' turns can use.
///
/// ```toml
/// [providers.local]
/// wire = "openai"                        # or "anthropic"
/// base_url = "http://127.0.0.1:8000/v1"  # https:// for a hosted provider
/// model = "gpt-4o-mini"
/// api_key_secret = "openai_key"          # the using agent's secret of that key
/// usd_per_million_input = 0.15
/// usd_per_million_output = 0.6
/// ```
#[derive(Clone, Debug, Deserialize)]
pub struct ProviderConfig {
    /// The wire format it speaks.
    pub wire: Wire,
    /// The base URL: `.../v1` for chat completions (`/chat/completions` is added), the
    /// API's root for Anthropic (`/v1/messages` is added).
    pub base_url: String,
    /// The model asked for.
    pub model: String,
    /// The key of the agent's secret that holds the API key (sent as a bearer token, or
    /// as `x-api-key` to Anthropic); absent: no key is sent (a local server). Keys come
    /// only from the secrets configuration, never from this file.
    #[serde(default)]
    pub api_key_secret: Option<String>,
    /// Whether replies are streamed (SSE); default `true`.
    #[serde(default = "yes")]
    pub stream: bool,
    /// US dollars per million input tokens, for the turn's cost.
    #[serde(default)]
    pub usd_per_million_input: f64,
    /// US dollars per million output tokens.
    #[serde(default)]
    pub usd_per_million_output: f64,
    /// How many times a request is sent again after a 429, a 5xx or a connection that
    /// failed before the answer began; default 3.
    #[serde(default = "default_retries")]
    pub max_retries: u32,
    /// The largest answer read, in bytes; default 8 MiB.
    #[serde(default = "default_max_response_bytes")]
    pub max_response_bytes: usize,
}

impl ProviderConfig {
    /// A provider of `wire` at `base_url` asking for `model`, with no key, streamed,
    /// free, and the other defaults.
    pub fn new(wire: Wire, base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            wire,
            base_url: base_url.into(),
            model: model.into(),
            api_key_secret: None,
            stream: true,
            usd_per_million_input: 0.0,
            usd_per_million_output: 0.0,
            max_retries: default_retries(),
            max_response_bytes: default_max_response_bytes(),
        }
    }
}

fn yes() -> bool {
    true
}

fn default_retries() -> u32 {
    3
}

fn default_max_response_bytes() -> usize {
    8 << 20
}

/// How an agent runs turns: its provider, its prompt, and the limits that end a turn
/// gracefully.
///
/// ```toml
/// [agents.support.turn]
/// provider = "local"
/// system = "You help the clinic's patients."
/// max_model_requests = 8
/// spend_cap_usd = 0.5                    # the turn's own requests, in US dollars
/// ```
#[derive(Clone, Debug, Deserialize)]
pub struct TurnConfig {
    /// The provider, by its name under `[providers]`.
    pub provider: String,
    /// The system prompt.
    #[serde(default)]
    pub system: Option<String>,
    /// The most model requests in one turn; default 8. The last one offers no tools, so
    /// the model answers in words instead of the turn failing.
    #[serde(default = "default_model_requests")]
    pub max_model_requests: u32,
    /// The most tool calls run in one turn; default 32. Calls past it are answered as
    /// skipped, and the next request offers no tools.
    #[serde(default = "default_tool_calls")]
    pub max_tool_calls: u32,
    /// How many of one step's tool calls run at once; default 4.
    #[serde(default = "default_parallel")]
    pub max_parallel_tools: u32,
    /// How many times one turn runs an identical call (same tool, same arguments);
    /// default 2. Past it the call is answered with an error instead of run.
    #[serde(default = "default_identical")]
    pub max_identical_calls: u32,
    /// The most staged actions one turn performs; default 3. Stagings past it are
    /// answered to the model as refused, so that it can tell the user.
    #[serde(default = "default_actions")]
    pub max_actions_per_turn: u32,
    /// The longest a turn may take, in seconds; default 300.
    #[serde(default = "default_deadline")]
    pub deadline_secs: u64,
    /// The longest one tool call may take, in milliseconds; default: the engine's.
    #[serde(default)]
    pub tool_timeout_ms: Option<u64>,
    /// The longest reply per model request, in tokens; default 4096.
    #[serde(default = "default_output_tokens")]
    pub max_output_tokens: u32,
    /// The most tokens (input and output) one turn may use over its requests; past it
    /// the next request is the last. Default: no cap.
    #[serde(default)]
    pub max_tokens: Option<u64>,
    /// The most the turn's own model requests may cost, in US dollars; default
    /// [`DEFAULT_TURN_SPEND_CAP_USD`]. Each request reserves its worst case (its input's
    /// bytes as tokens, `max_output_tokens` out, at the provider's prices) before it is
    /// sent and settles to the usage it reports; one cut before its usage stays charged
    /// the worst case. A request that leaves no room for another one is the last (it
    /// offers no tools); one the cap has no room for is not sent.
    #[serde(default = "default_turn_spend")]
    pub spend_cap_usd: f64,
    /// The most the agent's turns spend on their own requests over a sliding window;
    /// default [`WINDOW_CAP_TURNS`](crate::config::WINDOW_CAP_TURNS) times
    /// `spend_cap_usd` per hour. With a shared database, every replica counts it together.
    #[serde(default)]
    pub window: Option<SpendWindow>,
}

/// What a turn's own model requests may cost by default, in US dollars: no turn spends
/// without limit, even when the configuration names none.
pub const DEFAULT_TURN_SPEND_CAP_USD: f64 = 5.0;

fn default_turn_spend() -> f64 {
    DEFAULT_TURN_SPEND_CAP_USD
}

impl TurnConfig {
    /// Turns on `provider` with no system prompt and the default limits.
    pub fn new(provider: impl Into<String>) -> Self {
        Self {
            provider: provider.into(),
            system: None,
            max_model_requests: default_model_requests(),
            max_tool_calls: default_tool_calls(),
            max_parallel_tools: default_parallel(),
            max_identical_calls: default_identical(),
            max_actions_per_turn: default_actions(),
            deadline_secs: default_deadline(),
            tool_timeout_ms: None,
            max_output_tokens: default_output_tokens(),
            max_tokens: None,
            spend_cap_usd: DEFAULT_TURN_SPEND_CAP_USD,
            window: None,
        }
    }

    /// The agent's window over its turns' own requests: as configured, or the default.
    pub fn window(&self) -> SpendWindow {
        self.window.unwrap_or(SpendWindow {
            cap_usd: self.spend_cap_usd * crate::config::WINDOW_CAP_TURNS,
            secs: 3600,
        })
    }
}

fn default_model_requests() -> u32 {
    8
}
fn default_tool_calls() -> u32 {
    32
}
fn default_parallel() -> u32 {
    4
}
fn default_identical() -> u32 {
    2
}
fn default_actions() -> u32 {
    3
}
fn default_deadline() -> u64 {
    300
}
fn default_output_tokens() -> u32 {
    4096
}
