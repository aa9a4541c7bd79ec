//! `[agents.<name>]`: one agent's secrets, grants, tools, hooks and plugins' settings.

use std::collections::BTreeMap;
use std::fmt;

use plugin_sdk::knowledge::KnowledgeLevel;
use serde::Deserialize;

use super::{ModelGrant, ProjectConfig, TurnConfig};

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
    /// Dev mode (`plugin-dev`): what the tools its dev sessions serve may be given.
    #[serde(default)]
    pub dev: Option<DevConfig>,
    /// Its OAuth clients, by the provider they are for (`"<namespace>:<id>"`).
    #[serde(default)]
    pub oauth: BTreeMap<String, super::OAuthClientConfig>,
    /// Where each secret that is not the file's came from (the environment, the panel);
    /// [`secret_origin`](Self::secret_origin) reads it.
    #[serde(skip)]
    pub secret_origins: BTreeMap<String, SecretOrigin>,
}

/// Where an agent's secret came from, the first in this order that has it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SecretOrigin {
    /// An `ENGINE_SECRET__<agent>__<key>` variable.
    Environment,
    /// The admin panel (`engine serve`'s secrets page).
    Panel,
    /// The configuration file's `[agents.<agent>.secrets]`.
    File,
}

impl AgentConfig {
    /// Where the secret `key` came from, if the agent has it.
    pub fn secret_origin(&self, key: &str) -> Option<SecretOrigin> {
        self.secrets.contains_key(key).then(|| {
            self.secret_origins
                .get(key)
                .copied()
                .unwrap_or(SecretOrigin::File)
        })
    }

    /// Sets the secret `key` as `origin` gave it.
    pub(crate) fn set_secret(&mut self, key: String, value: String, origin: SecretOrigin) {
        self.secret_origins.insert(key.clone(), origin);
        self.secrets.insert(key, value);
    }
}

/// `[agents.<agent>.dev]`: what a dev session's tools may be given, besides what a
/// linked tool of the same declaration would be.
///
/// ```toml
/// [agents.bot.dev]
/// secrets = ["journal_token"]   # of the agent's secrets, those a session's tool may read
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DevConfig {
    /// The agent's secrets a session's tool may be given, when it declares them. A
    /// session runs code the image was not built with: it is given no other, and never a
    /// model provider's key nor another linked plugin's secret.
    #[serde(default)]
    pub secrets: Vec<String>,
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
            .field("dev", &self.dev)
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
