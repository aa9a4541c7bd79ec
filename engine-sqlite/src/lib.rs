//! The engine's embedded stores on SQLite, compiled in (nothing to install): conversations
//! in `conversations.sqlite`, the knowledge base in `knowledge.sqlite` and the OAuth
//! broker's sealed grants in `oauth.sqlite`, all under the engine's data directory. Give
//! them to an engine with [`backends`].

mod conversations;
mod grants;
mod holder;
mod knowledge;

use std::path::Path;
use std::sync::Arc;

use engine_core::config::KnowledgeLimits;
use engine_core::oauth::{GrantStore, GrantStoreError};
use engine_core::stores::{ConversationError, Conversations};
use engine_core::Backends;
use plugin_sdk::engine::KnowledgeStore;
use plugin_sdk::knowledge::KnowledgeError;

pub use conversations::SqliteConversations;
pub use grants::SqliteGrants;
pub use knowledge::SqliteKnowledge;

/// `backends` with conversations, knowledge and OAuth grants under the data directory on
/// SQLite.
pub fn backends(backends: Backends) -> Backends {
    backends.with_embedded(open_conversations, open_knowledge, open_grants)
}

/// The OAuth grant store in the SQLite database at `path`, created if missing.
pub fn open_grants(path: &Path) -> Result<Arc<dyn GrantStore>, GrantStoreError> {
    Ok(Arc::new(SqliteGrants::open(path)?))
}

/// Conversations in the SQLite database at `path`, created if missing.
pub fn open_conversations(path: &Path) -> Result<Conversations, ConversationError> {
    Ok(Conversations::new(SqliteConversations::open(path)?))
}

/// The knowledge store in the SQLite database at `path`, created if missing.
pub fn open_knowledge(
    path: &Path,
    limits: KnowledgeLimits,
) -> Result<Arc<dyn KnowledgeStore>, KnowledgeError> {
    Ok(Arc::new(SqliteKnowledge::open(path, limits)?))
}
