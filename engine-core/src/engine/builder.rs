//! Building an [`Engine`]: what it serves, its configuration, and the stores it uses.

use std::collections::BTreeMap;
use std::sync::Arc;

use arc_swap::ArcSwap;
use plugin_sdk::engine::{ArtifactStore, HookDescriptor, KnowledgeStore, ToolDescriptor};
use plugin_sdk::project::Project;

use super::agent::{Agent, AnyState};
use super::reload::{Configured, LogRedaction};
use super::Engine;
use super::{linked_config, project_roots};
use crate::config::{AgentConfig, EngineConfig, ProjectConfig};
use crate::limits::Limits;
use crate::model::{ModelGateway, SpendLedger};
use crate::provider::{Provider, ProviderError};
use crate::registry::{Linked, Registry};
use crate::stores::{ConversationError, ConversationStates, Conversations, MemoryArtifacts};
use crate::validate::StartupError;
use plugin_sdk::channel::ChannelDescriptor;

/// How an [`Engine`] is made: [`Engine::builder`], then what differs from the defaults,
/// then [`build`](Self::build).
///
/// By default the engine serves every tool and hook the binary linked, under the default
/// configuration, and opens the embedded stores the configuration asks for. A
/// configuration without agents gets one, `default`, that grants nothing.
#[derive(Default)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct EngineBuilder {
    config: EngineConfig,
    limits: Limits,
    tools: Option<Vec<&'static ToolDescriptor>>,
    hooks: Option<Vec<&'static HookDescriptor>>,
    knowledge: Option<Arc<dyn KnowledgeStore>>,
    gateway: Option<Arc<dyn ModelGateway>>,
    providers: BTreeMap<String, Arc<dyn Provider>>,
    conversations: Option<Conversations>,
    keep_conversations: bool,
    log_redaction: Option<LogRedaction>,
}

/// Why an engine did not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// A linked plugin, tool or hook is invalid: every problem, with its fix.
    #[error(transparent)]
    Startup(#[from] StartupError),
    /// A configuration value is out of range (see [`EngineConfig::check`]).
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
    Database(String),
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
    /// The configuration asks for a part this build of engine-core leaves out.
    #[error("the configuration needs {part}, and engine-core was built without the `{feature}` feature: enable it, or give the engine your own with `EngineBuilder::{setter}`")]
    MissingFeature {
        /// What the configuration asks for.
        part: &'static str,
        /// The Cargo feature that brings it.
        feature: &'static str,
        /// The builder method that takes one instead.
        setter: &'static str,
    },
}

impl EngineBuilder {
    /// The engine's configuration (agents, their secrets and grants, limits of the stores).
    pub fn config(mut self, config: EngineConfig) -> Self {
        self.config = config;
        self
    }

    /// Limits on every call and turn.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Serves these tools instead of every linked one (a host that offers a chosen few,
    /// a test); the hooks stay every linked one unless [`hooks`](Self::hooks) chooses
    /// too. Their plugins come along.
    pub fn tools(mut self, tools: impl IntoIterator<Item = &'static ToolDescriptor>) -> Self {
        self.tools = Some(tools.into_iter().collect());
        self
    }

    /// Runs these hooks instead of every linked one; the tools stay every linked one
    /// unless [`tools`](Self::tools) chooses too. Their plugins come along.
    pub fn hooks(mut self, hooks: impl IntoIterator<Item = &'static HookDescriptor>) -> Self {
        self.hooks = Some(hooks.into_iter().collect());
        self
    }

    /// The knowledge store, instead of the SQLite file the configuration implies.
    pub fn knowledge_store(mut self, store: Arc<dyn KnowledgeStore>) -> Self {
        self.knowledge = Some(store);
        self
    }

    /// The model gateway, instead of the one the configuration describes.
    pub fn model_gateway(mut self, gateway: Arc<dyn ModelGateway>) -> Self {
        self.gateway = Some(gateway);
        self
    }

    /// The provider called `name` in the configuration (`[providers.NAME]`, which may
    /// then be absent): a test's double, or a provider of your own.
    pub fn provider(mut self, name: impl Into<String>, provider: Arc<dyn Provider>) -> Self {
        self.providers.insert(name.into(), provider);
        self
    }

    /// The conversation store, instead of the one the configuration implies
    /// (`conversations.sqlite` under the data directory with the `sqlite` feature, when
    /// an agent runs turns; memory otherwise).
    pub fn conversations(mut self, conversations: Conversations) -> Self {
        self.conversations = Some(conversations);
        self
    }

    /// Keeps conversations where the configuration keeps those of turns (SQLite under
    /// the data directory, or the shared database) even when no agent runs turns: for
    /// calls in a conversation outside any turn, whose state is then kept across runs
    /// ([`Engine::call_in_conversation`], `engine call --conversation`).
    pub fn keep_conversations(mut self) -> Self {
        self.keep_conversations = true;
        self
    }

    /// The redactor of the log writer and the panic hook (which redact every configured
    /// secret): [`Engine::reload`] widens it with the secrets a new configuration brings,
    /// so that they never reach the log either.
    pub fn log_redaction(mut self, redaction: LogRedaction) -> Self {
        self.log_redaction = Some(redaction);
        self
    }

    /// What [`build`](Self::build) refuses short of opening or building anything: the
    /// linked plugins' problems (alone, when there are any), else every problem of the
    /// configuration alone and with what is linked. `engine config check` is this; what
    /// only starting shows (a plugin's state refusing its settings, a store that will not
    /// open) is left to `build`. Project roots that overlap what the engine reads are
    /// refused here too, creating nothing.
    pub fn check(mut self) -> Result<(), EngineError> {
        self.validated()?;
        project_roots::refuse_overlaps(&self.config, &[])
    }

    /// The registry of what is linked, when it and the configuration (given an agent)
    /// hold no problem.
    fn validated(&mut self) -> Result<Registry, EngineError> {
        let linked = Linked::choose(self.tools.take(), self.hooks.take());
        let registry = Registry::build(linked, self.limits)?;
        self.config.ensure_an_agent();
        let mut problems = self.config.problems();
        problems.extend(linked_config::problems(
            &self.config,
            &registry,
            &self.providers,
        ));
        self.config.refuse(problems)?;
        Ok(registry)
    }

    /// Validates what the engine serves and opens its stores: an engine exists only if
    /// every check passed.
    pub fn build(mut self) -> Result<Engine, EngineError> {
        // Before any plugin code runs (a plugin's state is built below): a plugin's own
        // reqwest client needs rustls's provider as much as the engine's does.
        #[cfg(feature = "http")]
        crate::provider::install_tls_provider();
        let registry = Arc::new(self.validated()?);
        // Before any store is opened: a refused start creates nothing.
        project_roots::refuse_overlaps(&self.config, &[])?;
        let config = self.config;
        let channels = mount_channels(&config, &registry);
        let shared = open_shared(&config)?;
        let knowledge = match self.knowledge {
            Some(store) => Some(store),
            None if config
                .agents
                .values()
                .any(|agent| agent.knowledge.is_some()) =>
            {
                match &shared {
                    Some(shared) => Some(Arc::clone(&shared.knowledge)),
                    None => Some(open_knowledge(&config)?),
                }
            }
            None => None,
        };
        let gateway = match (self.gateway, &config.gateway) {
            (Some(gateway), _) => Some(gateway),
            (None, Some(described)) => Some(open_gateway(described)?),
            (None, None) => None,
        };
        let conversations_for_turns = self.conversations.is_some()
            || self.keep_conversations
            || shared.is_some()
            || config.agents.values().any(|agent| agent.turn.is_some());
        let spend_ledger = shared.as_ref().map(|shared| Arc::clone(&shared.spend));
        let (conversations, artifacts) = match shared {
            Some(shared) => (
                self.conversations.unwrap_or(shared.conversations),
                shared.artifacts,
            ),
            None => {
                let conversations = match self.conversations {
                    Some(conversations) => conversations,
                    None => open_conversations(&config, self.keep_conversations)?,
                };
                let artifacts: Arc<dyn ArtifactStore> =
                    Arc::new(MemoryArtifacts::new(config.artifacts));
                (conversations, artifacts)
            }
        };
        let states = ConversationStates::new(config.state);
        let configured = Configured::build(config, &registry, &self.providers, None)?;
        Ok(Engine {
            id: super::EngineId::next(),
            configured: ArcSwap::from_pointee(configured),
            replacing: std::sync::Mutex::default(),
            reloading: std::sync::Mutex::default(),
            given_providers: self.providers,
            log_redaction: self.log_redaction,
            offers_changed: Arc::new(tokio::sync::watch::Sender::new(0)),
            conversations_for_turns: conversations_for_turns.into(),
            states,
            artifacts,
            spend_ledger,
            knowledge,
            gateway,
            registry,
            conversations: ArcSwap::from_pointee(conversations),
            running: Default::default(),
            channels,
        })
    }

    /// [`build`](Self::build) for an engine's `main`: on any problem, prints the report to
    /// stderr and exits with status 1, before anything is served.
    pub fn build_or_exit(self) -> Engine {
        self.build().unwrap_or_else(|error| {
            match error {
                // The report says that the engine refused, and ends its own lines.
                EngineError::Startup(_) => eprint!("{error}"),
                _ => eprintln!("the engine refused to start: {error}"),
            }
            std::process::exit(1)
        })
    }
}

/// The state of each plugin the agent configures, built from its settings (which
/// [`linked_config`] checked); or, when the agent's configuration `before` a reload had
/// the same settings, its state then (a reload does not reconnect what is unchanged).
pub(super) fn build_plugin_states(
    name: &str,
    agent: &AgentConfig,
    registry: &Registry,
    before: Option<&Agent>,
) -> Result<BTreeMap<String, AnyState>, EngineError> {
    let mut states = BTreeMap::new();
    for (namespace, settings) in &agent.plugins {
        // A state may connect somewhere: none for a plugin whose tools the agent's list
        // leaves out.
        let enables_one = agent.tools.as_ref().is_none_or(|ids| {
            ids.iter()
                .any(|id| id.split_once(':').is_some_and(|(of, _)| of == namespace))
        });
        if !enables_one {
            continue;
        }
        let Some(builder) = registry
            .plugins()
            .find(|(plugin, _)| plugin.namespace == namespace)
            .and_then(|(plugin, _)| plugin.state)
        else {
            continue;
        };
        if let Some(state) = before.and_then(|before| before.plugin_state(namespace, settings)) {
            states.insert(namespace.clone(), state);
            continue;
        }
        // Checked: `linked_config` refuses settings that do not convert.
        let Ok(settings) = linked_config::settings_value(settings) else {
            continue;
        };
        let state = builder
            .build(settings)
            .map_err(|message| EngineError::PluginState {
                agent: name.to_owned(),
                namespace: namespace.clone(),
                message,
            })?;
        states.insert(namespace.clone(), state);
    }
    Ok(states)
}

/// Opens a project root (created by [`project_roots::create_roots`]).
pub(super) fn open_project(config: &ProjectConfig) -> Result<Project, EngineError> {
    let failed = |source| EngineError::Project {
        root: config.root.clone(),
        source,
    };
    let root = std::fs::File::open(&config.root).map_err(failed)?;
    if !root.metadata().map_err(failed)?.is_dir() {
        return Err(failed(std::io::Error::new(
            std::io::ErrorKind::NotADirectory,
            "not a directory",
        )));
    }
    Ok(Project::new(root, config.limits()))
}

/// Each configured channel with its linked adapter and its agent (every configured one
/// is linked: [`linked_config`] checked).
fn mount_channels(
    config: &EngineConfig,
    registry: &Registry,
) -> Vec<(&'static ChannelDescriptor, String)> {
    config
        .channels
        .iter()
        .filter_map(|(name, mounted)| {
            let linked = registry
                .channels
                .iter()
                .find(|channel| channel.name == name)?;
            Some((*linked, mounted.agent.clone()))
        })
        .collect()
}

/// The provider of `agent`'s turns: the builder's, or the configuration's over HTTP.
pub(super) fn agent_provider(
    config: &EngineConfig,
    agent: &AgentConfig,
    given: &BTreeMap<String, Arc<dyn Provider>>,
) -> Result<Option<Arc<dyn Provider>>, EngineError> {
    let Some(turn) = &agent.turn else {
        return Ok(None);
    };
    if let Some(provider) = given.get(&turn.provider) {
        return Ok(Some(Arc::clone(provider)));
    }
    // Configured or given: `linked_config` checked.
    let Some(described) = config.providers.get(&turn.provider) else {
        return Ok(None);
    };
    http_provider(&turn.provider, described, agent)
}

#[cfg(feature = "http")]
fn http_provider(
    name: &str,
    described: &crate::config::ProviderConfig,
    agent: &AgentConfig,
) -> Result<Option<Arc<dyn Provider>>, EngineError> {
    let client = crate::provider::shared_client();
    let key = described
        .api_key_secret
        .as_ref()
        .and_then(|secret| agent.secrets.get(secret));
    let provider = crate::provider::HttpProvider::new(described, key.map(String::as_str), client)
        .map_err(|source| EngineError::Provider {
        name: name.to_owned(),
        source,
    })?;
    Ok(Some(Arc::new(provider)))
}

#[cfg(not(feature = "http"))]
fn http_provider(
    _: &str,
    _: &crate::config::ProviderConfig,
    _: &AgentConfig,
) -> Result<Option<Arc<dyn Provider>>, EngineError> {
    Err(EngineError::MissingFeature {
        part: "a model provider over HTTP (`[providers]`)",
        feature: "http",
        setter: "provider",
    })
}

/// The stores replicas share.
struct SharedStores {
    conversations: Conversations,
    artifacts: Arc<dyn ArtifactStore>,
    knowledge: Arc<dyn KnowledgeStore>,
    spend: Arc<dyn SpendLedger>,
}

/// The stores replicas share, in the database `[database]` names. Connecting migrates
/// the database.
#[cfg(feature = "postgres")]
fn open_shared(config: &EngineConfig) -> Result<Option<SharedStores>, EngineError> {
    use crate::stores::postgres::{Postgres, PostgresArtifacts, PostgresKnowledge};
    let Some(described) = &config.database else {
        return Ok(None);
    };
    let database = Arc::new(
        Postgres::connect(described).map_err(|error| EngineError::Database(error.to_string()))?,
    );
    tracing::info!(
        replica = database.replica(),
        "conversations, artifacts and knowledge are kept in the shared database"
    );
    Ok(Some(SharedStores {
        artifacts: Arc::new(PostgresArtifacts::new(
            Arc::clone(&database),
            config.artifacts,
        )),
        knowledge: Arc::new(PostgresKnowledge::new(
            Arc::clone(&database),
            config.knowledge,
        )),
        spend: Arc::clone(&database) as _,
        conversations: Conversations::postgres(database),
    }))
}

#[cfg(not(feature = "postgres"))]
fn open_shared(config: &EngineConfig) -> Result<Option<SharedStores>, EngineError> {
    match config.database {
        None => Ok(None),
        Some(_) => Err(EngineError::MissingFeature {
            part: "a shared database (`[database]`)",
            feature: "postgres",
            setter: "conversations",
        }),
    }
}

/// Where conversations are kept: SQLite under the data directory when an agent runs
/// turns (or `keep`) and the feature is in, memory otherwise.
pub(super) fn open_conversations(
    config: &EngineConfig,
    keep: bool,
) -> Result<Conversations, EngineError> {
    let turns = keep || config.agents.values().any(|agent| agent.turn.is_some());
    #[cfg(feature = "sqlite")]
    if turns {
        let data_dir = create_data_dir(config)?;
        return Ok(Conversations::open(&data_dir.join("conversations.sqlite"))?);
    }
    let _ = turns;
    Ok(Conversations::memory())
}

/// The data directory, created if missing; one that cannot be is refused naming the key
/// and the directory it resolves to (a relative `data` in a container's `/` is the usual
/// one).
#[cfg(feature = "sqlite")]
fn create_data_dir(config: &EngineConfig) -> Result<std::path::PathBuf, EngineError> {
    let given = config.data_dir();
    let absolute = std::path::absolute(&given).unwrap_or_else(|_| given.clone());
    match std::fs::create_dir_all(&absolute) {
        Ok(()) => Ok(given),
        Err(source) => Err(EngineError::DataDir {
            given,
            absolute,
            source,
        }),
    }
}

#[cfg(feature = "sqlite")]
fn open_knowledge(config: &EngineConfig) -> Result<Arc<dyn KnowledgeStore>, EngineError> {
    let path = create_data_dir(config)?.join("knowledge.sqlite");
    let store = crate::stores::SqliteKnowledge::open(&path, config.knowledge)
        .map_err(|source| EngineError::Knowledge { path, source })?;
    Ok(Arc::new(store))
}

#[cfg(not(feature = "sqlite"))]
fn open_knowledge(_: &EngineConfig) -> Result<Arc<dyn KnowledgeStore>, EngineError> {
    Err(EngineError::MissingFeature {
        part: "a knowledge store (an agent grants knowledge)",
        feature: "sqlite",
        setter: "knowledge_store",
    })
}

#[cfg(feature = "http")]
fn open_gateway(
    described: &crate::config::GatewayConfig,
) -> Result<Arc<dyn ModelGateway>, EngineError> {
    let gateway = crate::model::OpenAiCompatibleGateway::new(described)?;
    Ok(Arc::new(gateway))
}

#[cfg(not(feature = "http"))]
fn open_gateway(_: &crate::config::GatewayConfig) -> Result<Arc<dyn ModelGateway>, EngineError> {
    Err(EngineError::MissingFeature {
        part: "a model gateway (`[gateway]`)",
        feature: "http",
        setter: "model_gateway",
    })
}
