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
//! tools = ["acme:find_orders", "builtin:list_files"]  # absent: every tool it can equip
//! project = { root = "site" }       # the built-in file tools' root; see ProjectConfig
//! plugins.acme = { base_url = "https://crm.acme.example", region = "eu" }
//!                                   # a plugin's settings (`plugin! { state = T }`)
//!
//! [gateway]                         # an OpenAI-compatible endpoint for model access
//! base_url = "http://127.0.0.1:8000/v1"
//! tiers.fast = { model = "small", usd_per_million_input = 0.2, usd_per_million_output = 0.8 }
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use serde::Deserialize;

mod agent;
mod check;
pub(crate) use check::provider_problems;
mod environment;
mod error;
mod model;
mod oauth;
mod problem;
mod project;
mod read;
mod stores;
mod suggest;
mod toml_error;
mod turn;

pub use agent::{AgentConfig, DevConfig, HookChoice, HookSetting, SecretOrigin};
pub use error::ConfigError;
pub use model::{
    GatewayConfig, ModelGrant, SpendWindow, TierConfig, SESSION_CAP_TURNS, WINDOW_CAP_TURNS,
};
pub use oauth::{OAuthClientConfig, OAuthConfig, MAX_CONNECT_TTL_SECS};
pub use problem::ConfigProblem;
pub(crate) use read::is_published_choice;
pub(crate) use stores::is_media_range;
pub use stores::{ArtifactLimits, AttachmentLimits, DatabaseConfig, KnowledgeLimits, StateLimits};
pub(crate) use suggest::fix_for_unknown;

pub use project::{ProjectConfig, MAX_LIST_ENTRIES, MAX_PROJECT_FILE_BYTES};
pub use turn::{ProviderConfig, TurnConfig, DEFAULT_TURN_SPEND_CAP_USD};

pub use environment::{take_environment, Environment};

pub use check::{
    MAX_ARTIFACT_BYTES, MAX_ARTIFACT_CAPACITY_BYTES, MAX_ARTIFACT_TTL_SECS, MAX_BUSY_TIMEOUT_MS,
    MAX_DATABASE_CONNECTIONS, MAX_GATEWAY_RESPONSE_BYTES, MAX_KNOWLEDGE_CONNECTIONS,
    MAX_KNOWLEDGE_DOCUMENTS, MAX_KNOWLEDGE_DOCUMENT_BYTES, MAX_NAME_BYTES, MAX_OUTPUT_TOKENS,
    MAX_SEARCH_WORDS, MAX_SPEND_WINDOW_SECS, MAX_STATE_IDLE_SECS, MAX_STATE_KEYS,
    MAX_STATE_VALUE_BYTES, MAX_SWEEP_SECS, MAX_TURN_SECS, MAX_TURN_STEPS,
};

/// The prefix of environment variables that carry secrets:
/// `ENGINE_SECRET__<agent>__<key>=<value>`.
pub const SECRET_ENV_PREFIX: &str = "ENGINE_SECRET__";

/// The agent an engine without configured agents has: it grants nothing.
pub const DEFAULT_AGENT: &str = "default";

/// The instance's slug when the configuration sets none.
pub const DEFAULT_INSTANCE: &str = "default";

/// Everything an engine is configured with.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct EngineConfig {
    /// This deployment's slug, which plugins key what they keep by (the `Instance`
    /// extractor): the same on every replica; default `default`.
    #[serde(default)]
    pub instance: Option<String>,
    /// Where the engine keeps data (the knowledge base); default `data`.
    #[serde(default)]
    pub data_dir: Option<PathBuf>,
    /// The agents, by name.
    #[serde(default)]
    pub agents: BTreeMap<String, AgentConfig>,
    /// Limits of the artifact store.
    #[serde(default)]
    pub artifacts: ArtifactLimits,
    /// What files a message may bring (kept as artifacts).
    #[serde(default)]
    pub attachments: AttachmentLimits,
    /// Limits of the knowledge base.
    #[serde(default)]
    pub knowledge: KnowledgeLimits,
    /// The OAuth broker of `engine serve`.
    #[serde(default)]
    pub oauth: OAuthConfig,
    /// Limits of conversation state.
    #[serde(default)]
    pub state: StateLimits,
    /// The model gateway, for agents that grant model access.
    #[serde(default)]
    pub gateway: Option<GatewayConfig>,
    /// The model providers agents' turns use, by name.
    #[serde(default)]
    pub providers: BTreeMap<String, ProviderConfig>,
    /// The linked channels `engine serve` mounts, by name, each with the agent whose turns
    /// it runs; a linked channel not named here is not mounted.
    #[serde(default)]
    pub channels: BTreeMap<String, ChannelConfig>,
    /// External tools: command manifests and MCP servers described by files in a
    /// directory, picked up while the engine runs.
    #[serde(default)]
    pub extensions: ExtensionsConfig,
    /// A PostgreSQL database shared by every replica of the engine; absent: conversations
    /// are kept in SQLite under the data directory (processes that share it run a
    /// conversation's turns one at a time).
    #[serde(default)]
    pub database: Option<DatabaseConfig>,
    /// The file it was read from, for problems to name.
    #[serde(skip)]
    file: Option<PathBuf>,
    /// The keys it holds that the engine does not read, by dotted path: reported with
    /// every other problem by [`check`](Self::check), so that a typo never silently
    /// leaves a setting at its default.
    #[serde(skip)]
    unknown_keys: Vec<String>,
}

/// Where external tools are described, and the secrets their files may name.
///
/// ```toml
/// [extensions]
/// dir = "tools.d"                      # the default: beside the configuration file
/// secrets = { notes_token = "..." }    # an MCP server's `token_secret = "notes_token"`
/// ```
#[derive(Clone, Default, PartialEq, Deserialize)]
pub struct ExtensionsConfig {
    /// The directory, relative to the configuration file's; `tools.d` beside it when
    /// unset. An engine run without a configuration file has none.
    #[serde(default)]
    pub dir: Option<PathBuf>,
    /// Secret values by key, for extension files to name (never written in them).
    #[serde(default)]
    pub secrets: BTreeMap<String, String>,
    /// The most a command tool may write on stdout, in bytes; more stops it.
    #[serde(default)]
    pub max_output_bytes: Option<usize>,
    /// The directory of drop-in providers, relative to the configuration file's;
    /// `providers.d` beside it when unset. An engine run without a configuration file
    /// has none unless this is set.
    #[serde(default)]
    pub providers_dir: Option<PathBuf>,
}

/// Secret values are left out: only their keys show.
impl fmt::Debug for ExtensionsConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExtensionsConfig")
            .field("dir", &self.dir)
            .field("secrets", &self.secrets.keys().collect::<Vec<_>>())
            .field("max_output_bytes", &self.max_output_bytes)
            .field("providers_dir", &self.providers_dir)
            .finish()
    }
}

/// What a command tool may write on stdout when the configuration does not say.
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 1 << 20;

/// A mounted channel: `/channels/<name>` runs turns of `agent`.
///
/// ```toml
/// [channels.webhook]
/// agent = "assistant"
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct ChannelConfig {
    /// The agent (it needs a `turn` configuration).
    pub agent: String,
}

#[cfg(test)]
mod tests;
