//! The engine's configuration: its agents, what each grants, and where data lives. Read
//! from a TOML file, with secrets also from the environment.
//!
//! ```toml
//! data_dir = "data"                 # knowledge.sqlite goes here
//!
//! [agents.support]
//! knowledge = "write"               # read, write or manage; absent: no knowledge base
//! secrets = { crm_api_key = "..." } # or ENGINE_SECRET__support__crm_api_key
//! model = { spend_cap_usd = 0.05 }  # absent: no model access; see ModelGrant for the
//!                                   # session and window caps
//!
//! [gateway]                         # an OpenAI-compatible endpoint for model access
//! base_url = "http://127.0.0.1:8000/v1"
//! tiers.fast = { model = "small", usd_per_million_input = 0.2, usd_per_million_output = 0.8 }
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use plugin_sdk::knowledge::KnowledgeLevel;
use plugin_sdk::model::Tier;
use serde::Deserialize;

/// The prefix of environment variables that carry secrets:
/// `ENGINE_SECRET__<agent>__<key>=<value>`.
pub const SECRET_ENV_PREFIX: &str = "ENGINE_SECRET__";

/// The agent an engine without configured agents has: it grants nothing.
pub const DEFAULT_AGENT: &str = "default";

/// Everything an engine is configured with.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineConfig {
    /// Where the engine keeps data (the knowledge base); default `data`.
    #[serde(default)]
    pub data_dir: Option<PathBuf>,
    /// The agents, by name.
    #[serde(default)]
    pub agents: BTreeMap<String, AgentConfig>,
    /// Limits of the artifact store.
    #[serde(default)]
    pub artifacts: ArtifactLimits,
    /// Limits of the knowledge base.
    #[serde(default)]
    pub knowledge: KnowledgeLimits,
    /// The model gateway, for agents that grant model access.
    #[serde(default)]
    pub gateway: Option<GatewayConfig>,
}

/// One agent: its secrets and its grants.
#[derive(Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    /// Secret values by key.
    #[serde(default)]
    pub secrets: BTreeMap<String, String>,
    /// How far tools may use the agent's knowledge base; `None`: not at all.
    #[serde(default)]
    pub knowledge: Option<KnowledgeLevel>,
    /// Model access; `None`: tools get no model.
    #[serde(default)]
    pub model: Option<ModelGrant>,
}

impl fmt::Debug for AgentConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentConfig")
            .field("secrets", &self.secrets.keys().collect::<Vec<_>>())
            .field("knowledge", &self.knowledge)
            .field("model", &self.model)
            .finish()
    }
}

/// What an agent allows of model calls: three caps, each checked before a call with what
/// the call may cost at most.
///
/// ```toml
/// model = { spend_cap_usd = 0.05, session_cap_usd = 0.5, window = { cap_usd = 5.0, secs = 3600 } }
/// ```
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelGrant {
    /// The most a turn (one `tools/call` over MCP) may spend on model calls from tools, in
    /// US dollars.
    pub spend_cap_usd: f64,
    /// The most one client session (an MCP connection) may spend across its turns;
    /// default [`SESSION_CAP_TURNS`] times `spend_cap_usd`.
    #[serde(default)]
    pub session_cap_usd: Option<f64>,
    /// The most the agent spends over every client in a sliding window; default
    /// [`WINDOW_CAP_TURNS`] times `spend_cap_usd` per hour.
    #[serde(default)]
    pub window: Option<SpendWindow>,
}

/// A cap on an agent's spend over a sliding window of time.
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
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

/// Limits of the artifact store.
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ArtifactLimits {
    /// The largest artifact, in bytes.
    pub max_bytes: usize,
    /// All artifacts together, in bytes.
    pub capacity_bytes: usize,
    /// How long an artifact lives at most, in seconds.
    pub ttl_secs: u64,
}

impl Default for ArtifactLimits {
    fn default() -> Self {
        Self {
            max_bytes: 10 << 20,
            capacity_bytes: 256 << 20,
            ttl_secs: 15 * 60,
        }
    }
}

impl ArtifactLimits {
    /// The longest an artifact lives.
    pub fn ttl(&self) -> Duration {
        Duration::from_secs(self.ttl_secs)
    }
}

/// Limits of the knowledge base.
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct KnowledgeLimits {
    /// The largest document, in bytes.
    pub max_document_bytes: usize,
    /// The most documents an agent's knowledge base holds.
    pub max_documents: usize,
}

impl Default for KnowledgeLimits {
    fn default() -> Self {
        Self {
            max_document_bytes: 1 << 20,
            max_documents: 10_000,
        }
    }
}

/// An OpenAI-compatible chat completions endpoint, and what each tier maps to.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GatewayConfig {
    /// The base URL, such as `http://127.0.0.1:8000/v1` (plain HTTP).
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
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
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

/// Why the configuration could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read the configuration {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The text is not a valid configuration.
    #[error("{}{message}", path.as_ref().map(|path| format!("{}: ", path.display())).unwrap_or_default())]
    Invalid {
        /// The file, when the text came from one.
        path: Option<PathBuf>,
        /// What is wrong, and where.
        message: String,
    },
    /// A secret variable's name does not say which agent and key it is for.
    #[error("`{name}` names no agent and key: write {SECRET_ENV_PREFIX}<agent>__<key>")]
    SecretVariable {
        /// The variable.
        name: String,
    },
}

impl EngineConfig {
    /// Reads `path` (if given) and the secrets among `env`, then makes sure there is an
    /// agent: with none configured, the engine has [`DEFAULT_AGENT`], which grants nothing.
    pub fn load(
        path: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Self, ConfigError> {
        let mut config = match path {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
                    path: path.to_owned(),
                    source,
                })?;
                Self::parse(&text).map_err(|error| match error {
                    ConfigError::Invalid { message, .. } => ConfigError::Invalid {
                        path: Some(path.to_owned()),
                        message,
                    },
                    other => other,
                })?
            }
            None => Self::default(),
        };
        for (name, value) in env {
            if let Some(rest) = name.strip_prefix(SECRET_ENV_PREFIX) {
                let Some((agent, key)) = rest.split_once("__") else {
                    return Err(ConfigError::SecretVariable { name });
                };
                config
                    .agents
                    .entry(agent.to_owned())
                    .or_default()
                    .secrets
                    .insert(key.to_owned(), value);
            }
        }
        config.ensure_an_agent();
        Ok(config)
    }

    /// Parses TOML text.
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        toml::from_str(text).map_err(|error| ConfigError::Invalid {
            path: None,
            message: error.to_string(),
        })
    }

    /// Gives a configuration without agents the agent [`DEFAULT_AGENT`], which grants
    /// nothing: an engine always has an agent to call through.
    pub(crate) fn ensure_an_agent(&mut self) {
        if self.agents.is_empty() {
            self.agents
                .insert(DEFAULT_AGENT.to_owned(), AgentConfig::default());
        }
    }

    /// Where data lives.
    pub fn data_dir(&self) -> PathBuf {
        self.data_dir
            .clone()
            .unwrap_or_else(|| PathBuf::from("data"))
    }

    /// Every configured secret value, for redaction.
    pub(crate) fn secret_values(&self) -> impl Iterator<Item = &str> {
        self.agents
            .values()
            .flat_map(|agent| agent.secrets.values().map(String::as_str))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect()
    }

    #[test]
    fn secrets_come_from_the_environment_too_and_override_the_file() {
        let dir = std::env::temp_dir().join(format!("engine-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("engine.toml");
        std::fs::write(
            &path,
            "[agents.support]\nsecrets = { crm_api_key = \"from-file\", other = \"x\" }\n",
        )
        .unwrap();
        let config = EngineConfig::load(
            Some(&path),
            env(&[
                ("ENGINE_SECRET__support__crm_api_key", "from-env"),
                ("ENGINE_SECRET__sales__mail_token", "t"),
                ("PATH", "/bin"),
            ]),
        )
        .unwrap();
        assert_eq!(config.agents["support"].secrets["crm_api_key"], "from-env");
        assert_eq!(config.agents["support"].secrets["other"], "x");
        assert_eq!(config.agents["sales"].secrets["mail_token"], "t");
        let mut values: Vec<&str> = config.secret_values().collect();
        values.sort();
        assert_eq!(values, ["from-env", "t", "x"]);
    }

    #[test]
    fn without_agents_there_is_the_default_one_and_bad_input_is_named() {
        let config = EngineConfig::load(None, Vec::new()).unwrap();
        assert_eq!(config.agents.keys().collect::<Vec<_>>(), [DEFAULT_AGENT]);
        let error = EngineConfig::load(None, env(&[("ENGINE_SECRET__nokey", "v")])).unwrap_err();
        assert!(
            error.to_string().contains("names no agent and key"),
            "{error}"
        );
        let error = EngineConfig::parse("[agents.a]\nknowledge = \"everything\"\n").unwrap_err();
        assert!(error.to_string().contains("knowledge"), "{error}");
        let error = EngineConfig::parse("[agents.a]\nsecret = {}\n").unwrap_err();
        assert!(
            error.to_string().contains("unknown field `secret`"),
            "{error}"
        );
    }

    #[test]
    fn an_agents_debug_output_names_its_keys_not_their_values() {
        let config =
            EngineConfig::parse("[agents.a]\nsecrets = { key = \"value-123\" }\n").unwrap();
        let shown = format!("{config:?}");
        assert!(
            shown.contains("\"key\"") && !shown.contains("value-123"),
            "{shown}"
        );
    }
}
