//! What the configuration opens, through the backends an image gives the builder: the
//! providers of turns, the stores (embedded under the data directory, or shared by
//! replicas) and the tools' model gateway. The kernel links none of them: a part the
//! configuration asks for without its backend is refused at start-up, naming both.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use plugin_sdk::engine::{ArtifactStore, KnowledgeStore};
use plugin_sdk::knowledge::KnowledgeError;

use super::error::EngineError;
use crate::config::ArtifactLimits;
use crate::config::{AgentConfig, DatabaseConfig, EngineConfig, GatewayConfig, KnowledgeLimits};
use crate::model::{GatewayError, ModelGateway, SpendLedger};
use crate::oauth::{Broker, GrantStore, GrantStoreError, OAuthFlow};
pub use crate::provider::OpenProvider;
use crate::provider::Provider;
use crate::stores::{ConversationError, Conversations, PanelSecretStore};
use crate::BackendError;

/// The stores several replicas share, opened from `[database]`.
pub struct SharedStores {
    /// Conversations.
    pub conversations: Conversations,
    /// Artifacts.
    pub artifacts: Arc<dyn ArtifactStore>,
    /// The knowledge base.
    pub knowledge: Arc<dyn KnowledgeStore>,
    /// What agents spent on model calls.
    pub spend: Arc<dyn SpendLedger>,
    /// The OAuth grants the broker keeps.
    pub grants: Arc<dyn GrantStore>,
}

/// Opens conversations in the file at the path given.
pub type OpenConversations = fn(&Path) -> Result<Conversations, ConversationError>;
/// Opens the knowledge store in the file at the path given.
pub type OpenKnowledge =
    fn(&Path, KnowledgeLimits) -> Result<Arc<dyn KnowledgeStore>, KnowledgeError>;
/// Opens the OAuth grant store in the file at the path given.
pub type OpenGrants = fn(&Path) -> Result<Arc<dyn GrantStore>, GrantStoreError>;
/// Makes the HTTP half of the OAuth flow.
pub type OpenOAuthFlow = fn() -> Arc<dyn OAuthFlow>;
/// Opens the stores replicas share (the database's name for the log is the backend's).
pub type OpenShared =
    fn(&DatabaseConfig, ArtifactLimits, KnowledgeLimits) -> Result<SharedStores, BackendError>;
/// Opens where the admin panel keeps the secrets it sets, on the database `[database]`
/// names (engine-cli reads them before it builds the engine).
pub type OpenPanelSecrets = fn(&DatabaseConfig) -> Result<Arc<dyn PanelSecretStore>, BackendError>;
/// Makes the model gateway `[gateway]` describes.
pub type OpenGateway = fn(&GatewayConfig) -> Result<Arc<dyn ModelGateway>, GatewayError>;

/// The I/O backends an engine opens its configured parts with, each a function of the
/// crate that implements it (`engine-sqlite`, `engine-postgres`, `engine-providers`);
/// an image's crate gives them all at once (`engine::default_backends`, the façade's). A part the
/// builder is given directly ([`EngineBuilder::conversations`](super::EngineBuilder::conversations),
/// [`provider`](super::EngineBuilder::provider), ...) needs none.
#[derive(Clone, Copy, Default)]
#[non_exhaustive]
pub struct Backends {
    /// Runs once before any plugin code: what a backend needs installed process-wide
    /// (rustls's crypto provider, which a plugin's own HTTP client finds too).
    pub prepare: Option<fn()>,
    /// Conversations under the data directory, when an agent runs turns.
    pub conversations: Option<OpenConversations>,
    /// The knowledge store under the data directory, when an agent grants knowledge.
    pub knowledge: Option<OpenKnowledge>,
    /// The OAuth grants under the data directory, when an agent has an OAuth client.
    pub grants: Option<OpenGrants>,
    /// The OAuth flow's requests, when an agent has an OAuth client.
    pub oauth_flow: Option<OpenOAuthFlow>,
    /// Every store on the database `[database]` names.
    pub shared: Option<OpenShared>,
    /// The admin panel's secrets on the database `[database]` names.
    pub panel_secrets: Option<OpenPanelSecrets>,
    /// The providers `[providers]` describes.
    pub provider: Option<OpenProvider>,
    /// The tools' model gateway `[gateway]` describes.
    pub gateway: Option<OpenGateway>,
}

impl Backends {
    /// No backend: every store in memory, and only the parts the builder is given.
    pub const NONE: Self = Self {
        prepare: None,
        conversations: None,
        knowledge: None,
        grants: None,
        oauth_flow: None,
        shared: None,
        panel_secrets: None,
        provider: None,
        gateway: None,
    };

    /// These backends, with conversations, knowledge and OAuth grants under the data
    /// directory opened by `conversations`, `knowledge` and `grants`.
    pub fn with_embedded(
        mut self,
        conversations: OpenConversations,
        knowledge: OpenKnowledge,
        grants: OpenGrants,
    ) -> Self {
        self.conversations = Some(conversations);
        self.knowledge = Some(knowledge);
        self.grants = Some(grants);
        self
    }

    /// These backends, with the stores replicas share opened by `shared`.
    pub fn with_shared(mut self, shared: OpenShared) -> Self {
        self.shared = Some(shared);
        self
    }

    /// These backends, with the admin panel's secrets on the shared database opened by
    /// `open`.
    pub fn with_panel_secrets(mut self, open: OpenPanelSecrets) -> Self {
        self.panel_secrets = Some(open);
        self
    }

    /// These backends, with providers, the gateway and the OAuth flow made by
    /// `provider`, `gateway` and `oauth_flow`, and `prepare` run before any plugin code
    /// (in place of any `prepare` before).
    pub fn with_http(
        mut self,
        prepare: fn(),
        provider: OpenProvider,
        gateway: OpenGateway,
        oauth_flow: OpenOAuthFlow,
    ) -> Self {
        self.prepare = Some(prepare);
        self.provider = Some(provider);
        self.gateway = Some(gateway);
        self.oauth_flow = Some(oauth_flow);
        self
    }
}

/// The part the configuration asks for, without the backend that opens it.
fn missing(part: &'static str, backend: Crate, setter: &'static str) -> EngineError {
    EngineError::MissingBackend {
        part,
        backend: backend.name,
        feature: backend.feature,
        setter,
    }
}

/// A backend's crate, and the `engine` façade's feature that links it.
#[derive(Clone, Copy)]
struct Crate {
    name: &'static str,
    feature: &'static str,
}

const SQLITE: Crate = Crate {
    name: "engine-sqlite",
    feature: "sqlite",
};
const POSTGRES: Crate = Crate {
    name: "engine-postgres",
    feature: "postgres",
};
const PROVIDERS: Crate = Crate {
    name: "engine-providers",
    feature: "http",
};

/// What the builder was given instead of a backend's part.
pub(super) struct Given<'a> {
    pub(super) knowledge: bool,
    pub(super) grants: bool,
    pub(super) oauth_flow: bool,
    pub(super) gateway: bool,
    pub(super) conversations: bool,
    pub(super) keep_conversations: bool,
    pub(super) providers: &'a BTreeMap<String, Arc<dyn Provider>>,
}

/// Refuses, as starting would, a part `config` asks for that neither `backends` nor what
/// the builder was given can open: found without opening anything, so that `engine
/// config check` sees it too, and a refused start creates nothing.
pub(super) fn refuse_missing(
    config: &EngineConfig,
    backends: &Backends,
    given: Given<'_>,
) -> Result<(), EngineError> {
    let shared = config.database.is_some();
    if shared && backends.shared.is_none() {
        return Err(missing(
            "a shared database (`[database]`)",
            POSTGRES,
            "backends",
        ));
    }
    let grants_knowledge = config
        .agents
        .values()
        .any(|agent| agent.knowledge.is_some());
    if grants_knowledge && !given.knowledge && !shared && backends.knowledge.is_none() {
        return Err(missing(
            "a knowledge store (an agent grants knowledge)",
            SQLITE,
            "knowledge_store",
        ));
    }
    let has_clients = config.agents.values().any(|agent| !agent.oauth.is_empty());
    if has_clients && !given.grants && !shared && backends.grants.is_none() {
        return Err(missing(
            "an OAuth grant store (an agent has an OAuth client)",
            SQLITE,
            "grant_store",
        ));
    }
    if has_clients && !given.oauth_flow && backends.oauth_flow.is_none() {
        return Err(missing(
            "the OAuth flow's requests (an agent has an OAuth client)",
            PROVIDERS,
            "oauth_flow",
        ));
    }
    if config.gateway.is_some() && !given.gateway && backends.gateway.is_none() {
        return Err(missing(
            "a model gateway (`[gateway]`)",
            PROVIDERS,
            "model_gateway",
        ));
    }
    if given.keep_conversations
        && !given.conversations
        && !shared
        && backends.conversations.is_none()
    {
        return Err(missing(
            "conversations kept across runs (`keep_conversations`)",
            SQLITE,
            "conversations",
        ));
    }
    let configured_provider = config.agents.values().any(|agent| {
        agent.turn.as_ref().is_some_and(|turn| {
            !given.providers.contains_key(&turn.provider)
                && config.providers.contains_key(&turn.provider)
        })
    });
    if configured_provider && backends.provider.is_none() {
        return Err(missing(
            "a model provider (`[providers]`)",
            PROVIDERS,
            "provider",
        ));
    }
    Ok(())
}

/// The provider of `agent`'s turns: the builder's, or the configuration's.
pub(super) fn agent_provider(
    config: &EngineConfig,
    agent: &AgentConfig,
    given: &BTreeMap<String, Arc<dyn Provider>>,
    backends: &Backends,
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
    let open = backends
        .provider
        .ok_or_else(|| missing("a model provider (`[providers]`)", PROVIDERS, "provider"))?;
    let key = described
        .api_key_secret
        .as_ref()
        .and_then(|secret| agent.secrets.get(secret));
    let provider =
        open(described, key.map(String::as_str)).map_err(|source| EngineError::Provider {
            name: turn.provider.clone(),
            source,
        })?;
    Ok(Some(provider))
}

/// The stores replicas share, in the database `[database]` names. Connecting migrates
/// the database.
pub(super) fn open_shared(
    config: &EngineConfig,
    backends: &Backends,
) -> Result<Option<SharedStores>, EngineError> {
    let Some(described) = &config.database else {
        return Ok(None);
    };
    let open = backends
        .shared
        .ok_or_else(|| missing("a shared database (`[database]`)", POSTGRES, "backends"))?;
    let shared =
        open(described, config.artifacts, config.knowledge).map_err(EngineError::Database)?;
    tracing::info!("the shared database is open: it keeps each store the builder was not given");
    Ok(Some(shared))
}

/// Where conversations are kept: under the data directory when an agent runs turns (or
/// `keep`) and a backend opens them there, memory otherwise. Asked to `keep` them
/// without a backend that can, it refuses: memory would lose them with the process.
pub(super) fn open_conversations(
    config: &EngineConfig,
    keep: bool,
    backends: &Backends,
) -> Result<Conversations, EngineError> {
    let turns = keep || config.agents.values().any(|agent| agent.turn.is_some());
    match backends.conversations {
        Some(open) if turns => {
            let data_dir = create_data_dir(config)?;
            Ok(open(&data_dir.join("conversations.sqlite"))?)
        }
        None if keep => Err(missing(
            "conversations kept across runs (`keep_conversations`)",
            SQLITE,
            "conversations",
        )),
        _ => Ok(Conversations::memory()),
    }
}

/// The data directory, created if missing; one that cannot be is refused naming the key
/// and the directory it resolves to (a relative `data` in a container's `/` is the usual
/// one).
fn create_data_dir(config: &EngineConfig) -> Result<PathBuf, EngineError> {
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

pub(super) fn open_knowledge(
    config: &EngineConfig,
    backends: &Backends,
) -> Result<Arc<dyn KnowledgeStore>, EngineError> {
    let open = backends.knowledge.ok_or_else(|| {
        missing(
            "a knowledge store (an agent grants knowledge)",
            SQLITE,
            "knowledge_store",
        )
    })?;
    let path = create_data_dir(config)?.join("knowledge.sqlite");
    open(&path, config.knowledge).map_err(|source| EngineError::Knowledge { path, source })
}

pub(super) fn open_gateway(
    described: &GatewayConfig,
    backends: &Backends,
) -> Result<Arc<dyn ModelGateway>, EngineError> {
    let open = backends
        .gateway
        .ok_or_else(|| missing("a model gateway (`[gateway]`)", PROVIDERS, "model_gateway"))?;
    Ok(open(described)?)
}

/// The OAuth broker, when an agent has an OAuth client: its grants in `store` (given, or
/// the shared database's), else under the data directory; its requests `flow`'s (given,
/// or the backend's). `refuse_missing` made sure each can be had.
pub(super) fn open_broker(
    config: &EngineConfig,
    backends: &Backends,
    store: Option<Arc<dyn GrantStore>>,
    flow: Option<Arc<dyn OAuthFlow>>,
    key: Option<crate::oauth::SealKey>,
) -> Result<Option<Arc<Broker>>, EngineError> {
    if config.agents.values().all(|agent| agent.oauth.is_empty()) {
        return Ok(None);
    }
    let store = match (store, backends.grants) {
        (Some(store), _) => store,
        (None, Some(open)) => {
            let path = create_data_dir(config)?.join("oauth.sqlite");
            open(&path)
                .map_err(|error| EngineError::OAuth(format!("{}: {error}", path.display())))?
        }
        (None, None) => {
            return Err(missing(
                "an OAuth grant store (an agent has an OAuth client)",
                SQLITE,
                "grant_store",
            ))
        }
    };
    let flow = match (flow, backends.oauth_flow) {
        (Some(flow), _) => flow,
        (None, Some(open)) => open(),
        (None, None) => {
            return Err(missing(
                "the OAuth flow's requests (an agent has an OAuth client)",
                PROVIDERS,
                "oauth_flow",
            ))
        }
    };
    Broker::for_config(config, store, flow, key)
        .map(|broker| Some(Arc::new(broker)))
        .map_err(EngineError::OAuth)
}
