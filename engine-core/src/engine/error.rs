//! Why an engine did not start or a reload was refused, and why no agent answers a name.

use crate::provider::ProviderError;
use crate::stores::ConversationError;
use crate::validate::StartupError;
use crate::BackendError;

/// Why an engine did not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// A linked plugin, tool or hook is invalid: every problem, with its fix.
    #[error(transparent)]
    Startup(#[from] StartupError),
    /// A configuration value is out of range (see [`EngineConfig::check`](crate::config::EngineConfig::check)).
    #[error("the configuration is not valid: {0}")]
    Config(#[from] crate::config::ConfigError),
    /// An agent grants knowledge and the knowledge store could not be opened.
    #[error("the knowledge store {} could not be opened: {source}", path.display())]
    Knowledge {
        /// The store's file.
        path: std::path::PathBuf,
        /// Why it could not be opened.
        source: plugin_sdk::knowledge::KnowledgeError,
    },
    /// An agent has an OAuth client, and the broker cannot run (its key, its store).
    #[error("the OAuth broker cannot run: {0}")]
    OAuth(String),
    /// The configured model gateway is not usable.
    #[error("the model gateway is not usable: {0}")]
    Gateway(#[from] crate::model::GatewayError),
    /// An agent's model provider is not usable.
    #[error("the provider `{name}` is not usable: {source}")]
    Provider {
        /// The provider's name.
        name: String,
        /// Why.
        source: ProviderError,
    },
    /// The data directory (`data_dir`) could not be created.
    #[error("`data_dir` is {}, and {} could not be created ({source}): set `data_dir` to an absolute path of a directory the engine's user may create or write", given.display(), absolute.display())]
    DataDir {
        /// As configured (`data` by default, relative to the working directory).
        given: std::path::PathBuf,
        /// The directory it names.
        absolute: std::path::PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The conversation store could not be opened.
    #[error("the conversation store could not be opened: {0}")]
    Conversations(#[from] ConversationError),
    /// The shared database (`[database]`) could not be reached or migrated.
    #[error("the shared database could not be used: {0}")]
    Database(BackendError),
    /// A plugin's state could not be built from the agent's settings for it.
    #[error("the plugin `{namespace}` refused the settings `[agents.{agent}.plugins.{namespace}]`: {message}")]
    PluginState {
        /// The agent.
        agent: String,
        /// The plugin's namespace.
        namespace: String,
        /// The plugin's reason, with its fix.
        message: String,
    },
    /// An agent's project root could not be created or opened.
    #[error("the project root {} could not be opened: {source}", root.display())]
    Project {
        /// The configured root.
        root: std::path::PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A reload changes what only a restart applies.
    #[error("these changes need a restart: {}", .0.join(", "))]
    NeedsRestart(Vec<String>),
    /// The configuration asks for a part the engine was given no backend for.
    #[error("the configuration needs {part}, and the engine was built without a backend for it: turn on the `engine` crate's feature `{feature}` (what `engine::default_backends()` gives the builder), give the builder `{backend}`'s (`EngineBuilder::backends`), or your own with `EngineBuilder::{setter}`")]
    MissingBackend {
        /// What the configuration asks for.
        part: &'static str,
        /// The crate that opens it.
        backend: &'static str,
        /// The `engine` façade's feature that links that crate.
        feature: &'static str,
        /// The builder method that takes one instead.
        setter: &'static str,
    },
}

/// No agent has that name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("there is no agent `{name}`; the configured agents are: {}", known.join(", "))]
pub struct UnknownAgent {
    /// The name asked for.
    pub name: String,
    /// The agents there are.
    pub known: Vec<String>,
}
