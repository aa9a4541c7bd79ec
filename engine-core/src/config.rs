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
use std::path::{Path, PathBuf};
use std::time::Duration;

use plugin_sdk::engine::{Redact, RedactValues};
use plugin_sdk::knowledge::KnowledgeLevel;
use plugin_sdk::model::Tier;
use serde::Deserialize;

mod check;
mod environment;
mod problem;
mod project;
mod suggest;
mod turn;

pub use problem::ConfigProblem;
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

/// Everything an engine is configured with.
#[derive(Clone, Debug, Default, Deserialize)]
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
}

/// Secret values are left out: only their keys show.
impl fmt::Debug for ExtensionsConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExtensionsConfig")
            .field("dir", &self.dir)
            .field("secrets", &self.secrets.keys().collect::<Vec<_>>())
            .field("max_output_bytes", &self.max_output_bytes)
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

/// One agent: its secrets and its grants.
#[derive(Clone, Default, Deserialize)]
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
    /// How the agent runs turns; `None`: it serves tool calls only (MCP, `call`).
    #[serde(default)]
    pub turn: Option<TurnConfig>,
    /// The tools it enables, by id (`weather:weather`, `builtin:list_files`); `None`:
    /// every linked tool whose needs it meets.
    #[serde(default)]
    pub tools: Option<Vec<String>>,
    /// The external tools it equips (see [`crate::external`]), by id
    /// (`local:word_count`) or namespace (`local:*`); checked when their files are read,
    /// not at start-up, since a file may come later. `None`: every external tool when
    /// `tools` is `None` too, else none.
    #[serde(default)]
    pub external_tools: Option<Vec<String>>,
    /// The hooks that run in its turns, by id, each with the agent's own position or
    /// timeout if it sets one (a timeout at most the hook's declared one); `None`: every
    /// linked hook, as declared.
    ///
    /// ```toml
    /// hooks = ["guard:dirty_output_guard", { id = "acme:order_ids_hint", position = 5, timeout_ms = 500 }]
    /// ```
    #[serde(default)]
    pub hooks: Option<Vec<HookChoice>>,
    /// The directory its file tools work in; `None`: it equips no tool that takes
    /// `&Project` (the built-in file tools).
    #[serde(default)]
    pub project: Option<ProjectConfig>,
    /// Each plugin's settings, by namespace (`[agents.<agent>.plugins.acme]`), for the
    /// plugins that declare them (`plugin! { state = T }`): not secret. A plugin without
    /// them here gives the agent none of the tools that share its state.
    #[serde(default)]
    pub plugins: BTreeMap<String, toml::Table>,
}

impl fmt::Debug for AgentConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentConfig")
            .field("secrets", &self.secrets.keys().collect::<Vec<_>>())
            .field("knowledge", &self.knowledge)
            .field("model", &self.model)
            .field("turn", &self.turn)
            .field("tools", &self.tools)
            .field("external_tools", &self.external_tools)
            .field("hooks", &self.hooks)
            .field("project", &self.project)
            .field("plugins", &self.plugins)
            .finish()
    }
}

/// A hook an agent runs: its id, or its id with the agent's position and timeout.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(
    untagged,
    expecting = "a hook's id, or a table `{ id = \"...\", position = 10, timeout_ms = 500 }`"
)]
pub enum HookChoice {
    /// The hook as declared.
    Id(String),
    /// The hook, placed and bounded by the agent.
    Set(HookSetting),
}

/// A hook with the agent's own position or timeout.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookSetting {
    /// The hook's id, `<namespace>:<name>`.
    pub id: String,
    /// Its place among the agent's hooks of its event (lower runs first); `None`: as
    /// declared.
    #[serde(default)]
    pub position: Option<u32>,
    /// How long it may run, at most what the hook declares; `None`: as declared.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

impl HookChoice {
    /// The hook's id.
    pub fn id(&self) -> &str {
        match self {
            Self::Id(id) => id,
            Self::Set(setting) => &setting.id,
        }
    }

    /// The agent's position for it, if it sets one.
    pub fn position(&self) -> Option<u32> {
        match self {
            Self::Id(_) => None,
            Self::Set(setting) => setting.position,
        }
    }

    /// The agent's timeout for it, if it sets one.
    pub fn timeout_ms(&self) -> Option<u64> {
        match self {
            Self::Id(_) => None,
            Self::Set(setting) => setting.timeout_ms,
        }
    }
}

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

/// The PostgreSQL database that several replicas of an engine share: conversations (their
/// messages, turns, state and staged actions) and artifacts are kept there, so a
/// conversation's turns may land on any replica.
///
/// ```toml
/// [database]
/// url = "postgres://engine@db.internal:5432/engine"  # no password here: see password_env
/// password_env = "ENGINE_DATABASE_PASSWORD"          # the default
/// max_connections = 16                               # per replica, and again for turns' locks
/// timeout_ms = 5000                                  # the most one store operation waits
/// sweep_secs = 30                                    # how often dead replicas' turns are settled
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct DatabaseConfig {
    /// `postgres://user@host:port/database`, without a password.
    pub url: String,
    /// The environment variable that holds the password (none: no password is sent).
    #[serde(default = "DatabaseConfig::default_password_env")]
    pub password_env: String,
    /// The most connections one replica opens for store operations; and, in a pool of
    /// their own, the most turns of conversations it runs at once (each holds a
    /// connection for its conversation's lock; more wait up to `timeout_ms`). A replica
    /// opens up to twice this many.
    #[serde(default = "DatabaseConfig::default_max_connections")]
    pub max_connections: usize,
    /// The most one store operation waits for the database, in milliseconds (a call's
    /// or turn's deadline may cut it sooner): a slow database fails the operation with a
    /// clear error instead of holding the caller.
    #[serde(default = "DatabaseConfig::default_timeout_ms")]
    pub timeout_ms: u64,
    /// How often, in seconds, each replica records the turns stopped replicas left (in
    /// conversations no turn or reader came back to) interrupted, and their actions
    /// under way unknown.
    #[serde(default = "DatabaseConfig::default_sweep_secs")]
    pub sweep_secs: u64,
}

impl DatabaseConfig {
    fn default_password_env() -> String {
        "ENGINE_DATABASE_PASSWORD".to_owned()
    }

    fn default_max_connections() -> usize {
        16
    }

    fn default_timeout_ms() -> u64 {
        5000
    }

    fn default_sweep_secs() -> u64 {
        30
    }

    /// The bound on one store operation.
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms)
    }
}

/// Limits of the artifact store. Everything an artifact holds counts toward the
/// capacity: its bytes, its filename, its MIME type, its conversation's id and a fixed
/// overhead, so that empty artifacts cannot fill memory either.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(default)]
pub struct ArtifactLimits {
    /// The largest artifact, in bytes.
    pub max_bytes: usize,
    /// The longest filename, and the longest MIME type, in bytes.
    pub max_name_bytes: usize,
    /// All artifacts together, in bytes, as counted above.
    pub capacity_bytes: usize,
    /// How long an artifact lives at most, in seconds.
    pub ttl_secs: u64,
}

impl Default for ArtifactLimits {
    fn default() -> Self {
        Self {
            max_bytes: 10 << 20,
            max_name_bytes: 255,
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
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(default)]
pub struct KnowledgeLimits {
    /// The largest document, in bytes.
    pub max_document_bytes: usize,
    /// The longest filename, in bytes.
    pub max_filename_bytes: usize,
    /// The most documents an agent's knowledge base holds.
    pub max_documents: usize,
    /// The most distinct words a search looks for; a longer query is refused, naming
    /// this limit.
    pub max_search_words: usize,
    /// How many SQLite connections serve calls at once (at least one); each busy one
    /// holds a thread of the blocking pool.
    pub connections: usize,
    /// How long a call waits for a database another process holds locked, in
    /// milliseconds, before it fails saying so.
    pub busy_timeout_ms: u64,
}

impl Default for KnowledgeLimits {
    fn default() -> Self {
        Self {
            max_document_bytes: 1 << 20,
            max_filename_bytes: 255,
            max_documents: 10_000,
            max_search_words: 32,
            connections: 4,
            busy_timeout_ms: 5_000,
        }
    }
}

impl KnowledgeLimits {
    /// How long a call waits for a locked database.
    pub fn busy_timeout(&self) -> Duration {
        Duration::from_millis(self.busy_timeout_ms)
    }
}

/// Limits of conversation state, kept in memory. A call whose writes would break one
/// fails, and none of its writes is applied.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(default)]
pub struct StateLimits {
    /// The most keys a conversation's state holds.
    pub max_keys: usize,
    /// The largest value, as JSON, in bytes.
    pub max_value_bytes: usize,
    /// A conversation's keys and values together, in bytes.
    pub max_conversation_bytes: usize,
    /// Every conversation's state together, in bytes.
    pub capacity_bytes: usize,
    /// How long a conversation's state outlives its last call, in seconds; then all of
    /// it is dropped.
    pub idle_secs: u64,
}

impl Default for StateLimits {
    fn default() -> Self {
        Self {
            max_keys: 256,
            max_value_bytes: 64 << 10,
            max_conversation_bytes: 1 << 20,
            capacity_bytes: 256 << 20,
            idle_secs: 24 * 60 * 60,
        }
    }
}

impl StateLimits {
    /// How long an idle conversation's state is kept.
    pub fn idle(&self) -> Duration {
        Duration::from_secs(self.idle_secs)
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
    /// The configuration parses, and holds values the engine refuses: every one, each
    /// with its key and its fix.
    #[error("{}", problems_report(path.as_deref(), problems))]
    Problems {
        /// The file, when the configuration came from one.
        path: Option<PathBuf>,
        /// What is wrong.
        problems: Vec<ConfigProblem>,
    },
    /// A secret variable's name does not say which agent and key it is for.
    #[error("`{name}` names no agent and key: write {SECRET_ENV_PREFIX}<agent>__<key>")]
    SecretVariable {
        /// The variable.
        name: String,
    },
    /// A secret variable names an agent the configuration file does not define (a typo
    /// would otherwise make a new agent, and leave the meant one without its key).
    #[error("`{name}` is for the agent `{agent}`, which the configuration does not define; the configured agents are: {}. Rename the variable, or add [agents.{agent}] to the configuration", agents.join(", "))]
    UnknownSecretAgent {
        /// The variable.
        name: String,
        /// The agent it names.
        agent: String,
        /// The agents the configuration defines.
        agents: Vec<String>,
    },
}

/// `problems` one per line, each after the file it is in.
fn problems_report(path: Option<&Path>, problems: &[ConfigProblem]) -> String {
    let at = path
        .map(|path| format!("{}: ", path.display()))
        .unwrap_or_default();
    let mut report = format!("{} problem(s):", problems.len());
    for problem in problems {
        report.push_str(&format!("\n  {at}{problem}"));
    }
    report
}

impl ConfigError {
    /// The same error with every value `redact` knows replaced in its message.
    fn redacted(self, redact: &RedactValues) -> Self {
        match self {
            Self::Invalid { path, message } => Self::Invalid {
                path,
                message: redact.redact(&message).into_owned(),
            },
            other => other,
        }
    }
}

impl EngineConfig {
    /// [`read`](Self::read), then [`check`](Self::check).
    pub fn load(
        path: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Self, ConfigError> {
        let config = Self::read(path, env)?;
        config.check()?;
        Ok(config)
    }

    /// Reads `path` (if given) and the secrets among `env`, then makes sure there is an
    /// agent: with none configured, the engine has [`DEFAULT_AGENT`], which grants
    /// nothing. Values are not checked: the engine's builder checks them with what it
    /// links, and reports every problem at once.
    ///
    /// When the file defines agents, a secret variable must name one of them; without a
    /// file, or with a file that defines none, the variables define the agents. No error
    /// quotes a secret: a TOML error gives its message and position, never the line, and
    /// any secret value the message quotes is redacted.
    pub fn read(
        path: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Self, ConfigError> {
        let variables = secret_variables(env)?;
        let from_env = RedactValues::new(variables.iter().map(|variable| variable.value.clone()));
        let mut config = match path {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
                    path: path.to_owned(),
                    source,
                })?;
                let mut config = Self::parse_unchecked(&text).map_err(|error| {
                    match error.redacted(&from_env) {
                        ConfigError::Invalid { message, .. } => ConfigError::Invalid {
                            path: Some(path.to_owned()),
                            message,
                        },
                        other => other,
                    }
                })?;
                config.file = Some(path.to_owned());
                config
            }
            None => Self::default(),
        };
        let file_defines_agents = !config.agents.is_empty();
        for SecretVariable {
            name,
            agent,
            key,
            value,
        } in variables
        {
            if file_defines_agents && !config.agents.contains_key(&agent) {
                return Err(ConfigError::UnknownSecretAgent {
                    name,
                    agent,
                    agents: config.agents.keys().cloned().collect(),
                });
            }
            config
                .agents
                .entry(agent)
                .or_default()
                .secrets
                .insert(key, value);
        }
        config.ensure_an_agent();
        Ok(config)
    }

    /// Parses TOML text and checks every value. An error gives toml's message and the
    /// line and column, not the text there (it may be a secret), with every value of a
    /// `secrets` table redacted from the message.
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        let config = Self::parse_unchecked(text)?;
        config.check()?;
        Ok(config)
    }

    /// Parses TOML text, noting the keys it does not read instead of refusing the first.
    fn parse_unchecked(text: &str) -> Result<Self, ConfigError> {
        let invalid = |error: toml::de::Error| ConfigError::Invalid {
            path: None,
            message: check::toml_error(text, &error),
        };
        let document = toml::de::Deserializer::parse(text).map_err(invalid)?;
        let mut unknown_keys = Vec::new();
        let mut config: Self = serde_ignored::deserialize(document, |path| {
            unknown_keys.push(plugin_sdk::engine::dotted_key(&path))
        })
        .map_err(invalid)?;
        unknown_keys.sort();
        config.unknown_keys = unknown_keys;
        Ok(config)
    }

    /// Checks every value: no key the engine does not read, money finite and not
    /// negative, durations and sizes within the bounds this module's constants state.
    /// [`parse`](Self::parse) and the engine's builder call it; each problem names the
    /// key and the fix.
    pub fn check(&self) -> Result<(), ConfigError> {
        self.refuse(self.problems())
    }

    /// Every problem [`check`](Self::check) finds.
    pub(crate) fn problems(&self) -> Vec<ConfigProblem> {
        let mut problems: Vec<ConfigProblem> = self
            .unknown_keys
            .iter()
            .map(|key| {
                ConfigProblem::new(
                    key,
                    "is not a key the engine reads",
                    suggest::unknown_key_fix(key),
                )
            })
            .collect();
        problems.extend(check::problems(self));
        problems
    }

    /// `Ok` without problems, else all of them, naming the file the configuration came
    /// from.
    pub(crate) fn refuse(&self, problems: Vec<ConfigProblem>) -> Result<(), ConfigError> {
        if problems.is_empty() {
            return Ok(());
        }
        Err(ConfigError::Problems {
            path: self.file.clone(),
            problems,
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

    /// The file it was read from, if it was read from one.
    pub fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// Every configured secret value, for redaction; but a published choice: the value
    /// of a key that linked code declares only as a `select`, when it is one of the
    /// choices written in the plugins' source (a short one, `eu`, would blank out every
    /// word that holds it). Any other value of such a key stays redacted.
    pub(crate) fn secret_values(&self) -> impl Iterator<Item = &str> {
        self.agents
            .values()
            .flat_map(|agent| agent.secrets.iter())
            .filter(|(key, value)| !is_published_choice(key, value))
            .map(|(_, value)| value.as_str())
            .chain(self.extensions.secrets.values().map(String::as_str))
    }

    /// The directory of external tools: `extensions.dir` resolved against the
    /// configuration file's directory, or `tools.d` beside the file; none without a file
    /// (nor a directory set).
    pub fn extensions_dir(&self) -> Option<PathBuf> {
        let beside = self
            .file
            .as_ref()
            .map(|file| file.parent().unwrap_or(Path::new("")).to_owned());
        match (&self.extensions.dir, beside) {
            (Some(dir), Some(beside)) => Some(beside.join(dir)),
            (Some(dir), None) => Some(dir.clone()),
            (None, beside) => beside.map(|beside| beside.join("tools.d")),
        }
    }
}

/// One `ENGINE_SECRET__<agent>__<key>` variable, read.
struct SecretVariable {
    name: String,
    agent: String,
    key: String,
    value: String,
}

/// The secret variables among `env`, each split into its agent and key.
fn secret_variables(
    env: impl IntoIterator<Item = (String, String)>,
) -> Result<Vec<SecretVariable>, ConfigError> {
    let mut variables = Vec::new();
    for (name, value) in env {
        let Some(rest) = name.strip_prefix(SECRET_ENV_PREFIX) else {
            continue;
        };
        let Some((agent, key)) = rest.split_once("__") else {
            return Err(ConfigError::SecretVariable { name });
        };
        variables.push(SecretVariable {
            agent: agent.to_owned(),
            key: key.to_owned(),
            name,
            value,
        });
    }
    Ok(variables)
}

/// Whether `value` is a published choice of `key`: every linked declaration of the key
/// is a `select`, and each lists `value` among its choices.
pub(crate) fn is_published_choice(key: &str, value: &str) -> bool {
    let tools = plugin_sdk::engine::linked_tools().flat_map(|tool| tool.secret_specs());
    let hooks = plugin_sdk::engine::linked_hooks().flat_map(|hook| hook.secret_specs());
    let mut declared = tools.chain(hooks).filter(|spec| spec.key == key).peekable();
    declared.peek().is_some()
        && declared.all(|spec| match spec.kind {
            plugin_sdk::secrets::SecretKind::Select(choices) => choices.contains(&value),
            _ => false,
        })
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
            "[agents.support]\nsecrets = { crm_api_key = \"from-file\", other = \"x\" }\n[agents.sales]\n",
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
            error
                .to_string()
                .contains("`agents.a.secret` is not a key the engine reads"),
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

    #[test]
    fn a_secret_variable_for_an_agent_the_file_does_not_define_is_refused_naming_those_it_does() {
        let dir = std::env::temp_dir().join(format!("engine-config-agents-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("engine.toml");
        std::fs::write(&path, "[agents.support]\n[agents.sales]\n").unwrap();
        let error = EngineConfig::load(
            Some(&path),
            env(&[("ENGINE_SECRET__suport__crm_api_key", "k")]),
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "`ENGINE_SECRET__suport__crm_api_key` is for the agent `suport`, which the \
             configuration does not define; the configured agents are: sales, support. \
             Rename the variable, or add [agents.suport] to the configuration"
        );
        // Without a file the variables still define the agents.
        let config =
            EngineConfig::load(None, env(&[("ENGINE_SECRET__suport__crm_api_key", "k")])).unwrap();
        assert_eq!(config.agents.keys().collect::<Vec<_>>(), ["suport"]);
    }

    #[test]
    fn money_that_is_not_a_finite_amount_of_dollars_is_refused() {
        let error = EngineConfig::parse(
            "[agents.a]\nmodel = { spend_cap_usd = nan }\n\
             [agents.b]\nmodel = { spend_cap_usd = -0.5 }\n\
             [gateway]\nbase_url = \"http://127.0.0.1:1/v1\"\n\
             tiers.fast = { model = \"m\", usd_per_million_input = inf, usd_per_million_output = -1.0 }\n",
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "4 problem(s):\n  \
             `agents.a.model.spend_cap_usd` is NaN: give a finite amount of US dollars, 0 or more\n  \
             `agents.b.model.spend_cap_usd` is -0.5: give a finite amount of US dollars, 0 or more\n  \
             `gateway.tiers.fast.usd_per_million_input` is inf: give a finite amount of US dollars, 0 or more\n  \
             `gateway.tiers.fast.usd_per_million_output` is -1: give a finite amount of US dollars, 0 or more"
        );
        assert!(EngineConfig::parse("[agents.a]\nmodel = { spend_cap_usd = 0.0 }\n").is_ok());
        let error = EngineConfig::parse(
            "[agents.c]\nmodel = { spend_cap_usd = 1.0, session_cap_usd = nan, \
             window = { cap_usd = -1.0, secs = 0 } }\n",
        )
        .unwrap_err();
        let message = error.to_string();
        for problem in [
            "`agents.c.model.session_cap_usd` is NaN: give a finite amount",
            "`agents.c.model.window.cap_usd` is -1: give a finite amount",
            "`agents.c.model.window.secs` is 0: give 1 to 2678400 seconds",
        ] {
            assert!(
                message.contains(problem),
                "`{problem}` is missing from: {message}"
            );
        }
    }

    #[test]
    fn durations_and_sizes_out_of_their_bounds_are_refused_with_the_bounds() {
        let error = EngineConfig::parse(&format!(
            "[artifacts]\nttl_secs = {}\nmax_bytes = 0\ncapacity_bytes = 1\n\
             [knowledge]\nmax_document_bytes = 0\nmax_documents = {}\n",
            i64::MAX,
            MAX_KNOWLEDGE_DOCUMENTS + 1
        ))
        .unwrap_err();
        let message = error.to_string();
        for problem in [
            format!(
                "`artifacts.ttl_secs` is {}: give 1 to 604800 seconds",
                i64::MAX
            ),
            "`artifacts.max_bytes` is 0: give 1 to 1073741824 bytes".to_owned(),
            "`knowledge.max_document_bytes` is 0: give 1 to 67108864 bytes".to_owned(),
            "`knowledge.max_documents` is 10000001: give 1 to 10000000 documents".to_owned(),
        ] {
            assert!(
                message.contains(&problem),
                "`{problem}` is missing from: {message}"
            );
        }
        let error = EngineConfig::parse(
            "[knowledge]\nmax_search_words = 0\nconnections = 1000\nmax_filename_bytes = 0\n\
             busy_timeout_ms = 60001\n\
             [state]\nidle_secs = 0\nmax_value_bytes = 100\nmax_conversation_bytes = 99\n",
        )
        .unwrap_err();
        let message = error.to_string();
        for problem in [
            "`knowledge.max_search_words` is 0: give 1 to 1024 words",
            "`knowledge.connections` is 1000: give 1 to 64 connections",
            "`knowledge.max_filename_bytes` is 0: give 1 to 4096 bytes",
            "`knowledge.busy_timeout_ms` is 60001: give 0 to 60000 milliseconds",
            "`state.idle_secs` is 0: give 1 to 2592000 seconds",
            "`state.max_conversation_bytes` is 99: give 100 to",
        ] {
            assert!(
                message.contains(problem),
                "`{problem}` is missing from: {message}"
            );
        }
        let error =
            EngineConfig::parse("[artifacts]\nmax_bytes = 100\ncapacity_bytes = 99\n").unwrap_err();
        assert!(
            error.to_string().contains(
                "`artifacts.capacity_bytes` is 99: give 100 to 68719476736 bytes (at least artifacts.max_bytes"
            ),
            "{error}"
        );
        // The engine's builder checks a configuration made in code too.
        let mut config = EngineConfig::default();
        config.artifacts.ttl_secs = u64::MAX;
        let refused = crate::Engine::builder().config(config).build();
        assert!(
            matches!(refused, Err(crate::EngineError::Config(_))),
            "a ttl of u64::MAX seconds was accepted"
        );
    }

    #[test]
    fn every_section_refuses_an_unknown_key() {
        for (key, text) in [
            ("data_dirr", "data_dirr = \"x\"\n"),
            ("agents.a.secret", "[agents.a]\nsecret = {}\n"),
            ("agents.a.model.cap", "[agents.a]\nmodel = { spend_cap_usd = 1.0, cap = 2 }\n"),
            ("agents.a.model.windows", "[agents.a]\nmodel = { spend_cap_usd = 1.0, windows = 2 }\n"),
            ("agents.a.project.rot", "[agents.a.project]\nroot = \"r\"\nrot = 1\n"),
            ("agents.a.turn.max_steps", "[agents.a.turn]\nprovider = \"p\"\nmax_steps = 1\n"),
            ("artifacts.ttl", "[artifacts]\nttl = 5\n"),
            ("knowledge.max_docs", "[knowledge]\nmax_docs = 5\n"),
            ("state.idle", "[state]\nidle = 5\n"),
            ("channels.hook.agnet", "[channels.hook]\nagent = \"a\"\nagnet = 1\n"),
            ("providers.p.modle", "[providers.p]\nwire = \"openai\"\nbase_url = \"http://x\"\nmodel = \"m\"\nmodle = 1\n"),
            ("gateway.key", "[gateway]\nbase_url = \"http://x\"\ntiers = {}\nkey = \"k\"\n"),
            (
                "gateway.tiers.fast.currency",
                "[gateway]\nbase_url = \"http://x\"\ntiers.fast = { model = \"m\", usd_per_million_input = 1.0, usd_per_million_output = 1.0, currency = \"eur\" }\n",
            ),
        ] {
            let error = EngineConfig::parse(text).unwrap_err().to_string();
            assert!(
                error.contains(&format!("`{key}` is not a key the engine reads")),
                "{key}: {error}"
            );
        }
    }

    #[test]
    fn every_unknown_key_and_value_out_of_range_is_reported_at_once() {
        let error = EngineConfig::parse(
            "data_dirr = \"x\"\n[agents.a]\nknowlege = \"read\"\n[artifacts]\nttl_secs = 0\nttl = 5\n",
        )
        .unwrap_err();
        let ConfigError::Problems { problems, .. } = &error else {
            panic!("not a list of problems: {error}");
        };
        let keys: Vec<&str> = problems
            .iter()
            .map(|problem| problem.key.as_str())
            .collect();
        assert_eq!(
            keys,
            [
                "agents.a.knowlege",
                "artifacts.ttl",
                "data_dirr",
                "artifacts.ttl_secs"
            ]
        );
    }

    #[test]
    fn a_toml_error_says_where_and_never_quotes_a_secret() {
        let error =
            EngineConfig::parse("[agents.support]\nsecrets = { crm_api_key = sk-live-4242 }\n")
                .unwrap_err()
                .to_string();
        assert!(error.starts_with("line 2, column "), "{error}");
        assert!(
            !error.contains("sk-live") && !error.contains('\n'),
            "{error}"
        );
        // A value that parses but does not fit: serde's message quotes it, and it is a
        // secret's, so it is redacted.
        let error = EngineConfig::parse(
            "[agents.support]\nsecrets = { crm_api_key = \"sk-\\\"quoted\\\"\" }\nknowledge = \"sk-\\\"quoted\\\"\"\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.contains("[REDACTED]") && !error.contains("quoted"),
            "{error}"
        );
        // A number left where a string belongs is quoted too.
        let error = EngineConfig::parse("[agents.a]\nsecrets = { pin = 90817263 }\n")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("[REDACTED]") && !error.contains("90817263"),
            "{error}"
        );
    }

    #[test]
    fn a_database_url_with_a_password_or_another_scheme_is_refused_saying_where_it_goes() {
        let error = EngineConfig::parse(
            "[database]\nurl = \"postgres://engine:hunter2@db:5432/engine\"\npassword_env = \"DB_PASS\"\n\
             max_connections = 1\ntimeout_ms = 0\n",
        )
        .unwrap_err();
        let message = error.to_string();
        for problem in [
            "`database.url` holds a password: remove it from the URL and set the environment variable `DB_PASS` instead",
            "`database.max_connections` is 1: give 2 to 1024 connections (and as many again for turns' conversation locks)",
            "`database.timeout_ms` is 0: give 1 to 60000 milliseconds",
        ] {
            assert!(message.contains(problem), "`{problem}` is missing from: {message}");
        }
        assert!(!message.contains("hunter2"), "{message}");
        let error = EngineConfig::parse(
            "[database]\nurl = \"postgres://engine@db/engine?sslmode=disable&password=hunter2\"\n",
        )
        .unwrap_err();
        let message = error.to_string();
        assert!(
            message.contains("`database.url` holds a password: remove it from the URL"),
            "{message}"
        );
        assert!(!message.contains("hunter2"), "{message}");
        let error =
            EngineConfig::parse("[database]\nurl = \"mysql://engine@db/engine\"\n").unwrap_err();
        assert!(
            error
                .to_string()
                .contains("`database.url` is not a PostgreSQL URL"),
            "{error}"
        );
        let fine = EngineConfig::parse(
            "[database]\nurl = \"postgresql://engine@db/engine?sslmode=disable\"\n",
        )
        .unwrap();
        let database = fine.database.unwrap();
        assert_eq!(database.password_env, "ENGINE_DATABASE_PASSWORD");
        assert_eq!((database.max_connections, database.timeout_ms), (16, 5000));
    }
}
