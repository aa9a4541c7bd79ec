//! What the configuration opens: the providers of turns, the stores (embedded, or shared
//! by replicas) and the tools' model gateway.

use std::collections::BTreeMap;
use std::sync::Arc;

use plugin_sdk::engine::{ArtifactStore, KnowledgeStore};

use super::error::EngineError;
use crate::config::{AgentConfig, EngineConfig};
use crate::model::{ModelGateway, SpendLedger};
use crate::provider::Provider;
use crate::stores::Conversations;

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
pub(super) struct SharedStores {
    pub(super) conversations: Conversations,
    pub(super) artifacts: Arc<dyn ArtifactStore>,
    pub(super) knowledge: Arc<dyn KnowledgeStore>,
    pub(super) spend: Arc<dyn SpendLedger>,
}

/// The stores replicas share, in the database `[database]` names. Connecting migrates
/// the database.
#[cfg(feature = "postgres")]
pub(super) fn open_shared(config: &EngineConfig) -> Result<Option<SharedStores>, EngineError> {
    use crate::stores::postgres::{
        Postgres, PostgresArtifacts, PostgresConversations, PostgresKnowledge,
    };
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
        conversations: Conversations::new(PostgresConversations::new(database)),
    }))
}

#[cfg(not(feature = "postgres"))]
pub(super) fn open_shared(config: &EngineConfig) -> Result<Option<SharedStores>, EngineError> {
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
pub(super) fn create_data_dir(config: &EngineConfig) -> Result<std::path::PathBuf, EngineError> {
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
pub(super) fn open_knowledge(
    config: &EngineConfig,
) -> Result<Arc<dyn KnowledgeStore>, EngineError> {
    let path = create_data_dir(config)?.join("knowledge.sqlite");
    let store = crate::stores::SqliteKnowledge::open(&path, config.knowledge)
        .map_err(|source| EngineError::Knowledge { path, source })?;
    Ok(Arc::new(store))
}

#[cfg(not(feature = "sqlite"))]
pub(super) fn open_knowledge(_: &EngineConfig) -> Result<Arc<dyn KnowledgeStore>, EngineError> {
    Err(EngineError::MissingFeature {
        part: "a knowledge store (an agent grants knowledge)",
        feature: "sqlite",
        setter: "knowledge_store",
    })
}

#[cfg(feature = "http")]
pub(super) fn open_gateway(
    described: &crate::config::GatewayConfig,
) -> Result<Arc<dyn ModelGateway>, EngineError> {
    let gateway = crate::model::OpenAiCompatibleGateway::new(described)?;
    Ok(Arc::new(gateway))
}

#[cfg(not(feature = "http"))]
pub(super) fn open_gateway(
    _: &crate::config::GatewayConfig,
) -> Result<Arc<dyn ModelGateway>, EngineError> {
    Err(EngineError::MissingFeature {
        part: "a model gateway (`[gateway]`)",
        feature: "http",
        setter: "model_gateway",
    })
}
