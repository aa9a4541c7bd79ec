//! The engine's turn as a contender of the turn benchmark (`benches/turn`, run by
//! `scripts/bench-turn`, which depends on this crate): the benchmark's `weather` tool,
//! written as a plugin, and one turn of an agent whose provider is the benchmark's fake
//! OpenAI-compatible server.
//!
//! A turn here is what the floor does: the prompt, three parallel tool calls, their
//! results, the final text; outside any conversation, so nothing is stored.

use std::sync::Arc;

use engine_core::config::{AgentConfig, EngineConfig, ProviderConfig, TurnConfig};
use engine_core::provider::Wire;
use engine_core::{Engine, Stop, TurnControl};
use plugin_sdk::prelude::*;

plugin_sdk::plugin! {
    namespace = "bench",
    engine = ">=0.1, <2",
    display_name = { "en-US": "Bench" },
    description = "The anchor's weather tool.",
}

/// The name the model calls the tool by: the plugin's namespace and the tool's name.
pub const WIRE_NAME: &str = "bench__weather";

/// What the engine installs before any plugin code runs, for the benchmark's `main` to run
/// before it builds any client: the floor's and rig's reqwest is the engine's build
/// (rustls without a provider of its own), so every client needs the engine's provider.
pub fn prepare() {
    engine_providers::install_tls_provider();
}

/// The arguments of `weather`, as the benchmark's other contenders take them.
#[derive(Debug, Deserialize, JsonSchema, ToolArgs)]
pub struct WeatherArgs {
    /// City name.
    pub city: String,
    /// Number of days.
    pub days: u8,
}

/// The anchor's forecast.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Forecast {
    /// The city.
    pub city: String,
    /// One temperature per day.
    pub temps_c: Vec<f32>,
}

/// Daily forecast (degrees Celsius) for a city.
#[define_tool]
async fn weather(args: WeatherArgs) -> Result<Forecast, ToolError> {
    // The anchor's body, byte for byte in effect: an FNV hash of the name.
    let mut hash: u32 = 2166136261;
    for byte in args.city.bytes() {
        hash = (hash ^ byte as u32).wrapping_mul(16777619);
    }
    let base = (hash % 25) as f32;
    let temps_c = (0..args.days.min(3))
        .map(|day| base + 0.5 * day as f32)
        .collect();
    Ok(Forecast {
        city: args.city,
        temps_c,
    })
}

/// An engine with one agent, `bench`, on the anchor's server at `base_url`.
pub struct EngineContender {
    engine: Arc<Engine>,
}

impl EngineContender {
    /// The engine, with the anchor's preamble, streamed replies or not, and three tool
    /// calls at once.
    pub fn new(base_url: &str, preamble: &str, model: &str, stream: bool) -> Self {
        let mut config = EngineConfig::default();
        let mut provider = ProviderConfig::new(Wire::Openai, base_url, model);
        provider.stream = stream;
        provider.max_retries = 0;
        config.providers.insert("anchor".into(), provider);
        let mut turn = TurnConfig::new("anchor");
        turn.system = Some(preamble.to_owned());
        turn.max_parallel_tools = 3;
        config.agents.insert(
            "bench".into(),
            AgentConfig {
                turn: Some(turn),
                ..AgentConfig::default()
            },
        );
        let engine = Engine::builder()
            .backends(engine_providers::backends(engine_core::Backends::NONE))
            .config(config)
            .build()
            .expect("the engine starts");
        Self {
            engine: Arc::new(engine),
        }
    }

    /// One turn for `prompt`: the reply's text.
    pub async fn turn(&self, prompt: &str) -> Result<String, String> {
        let turn = self
            .engine
            .turn("bench")
            .map_err(|error| error.to_string())?;
        let summary = self
            .engine
            .converse(&turn, Some(prompt), &TurnControl::default(), &mut |_| {})
            .await;
        match summary.stop {
            Stop::Answered => Ok(summary.reply),
            stop => Err(format!("the turn ended with {stop:?}")),
        }
    }
}
