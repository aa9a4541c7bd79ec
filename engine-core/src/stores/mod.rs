//! The stores an engine keeps for its turns and tools: conversation state and artifacts in
//! memory, conversations and the embedded knowledge store in SQLite (the `sqlite`
//! feature), and conversations and artifacts in a PostgreSQL database that replicas
//! share (the `postgres` feature).

mod artifacts;
pub(crate) mod conversations;
#[cfg(test)]
#[allow(unsafe_code)]
mod held_bytes;
#[cfg(feature = "postgres")]
pub mod postgres;
mod records;
#[cfg(feature = "sqlite")]
mod sqlite_knowledge;
#[cfg(feature = "sqlite")]
mod sqlite_turns;
mod states;

pub use artifacts::MemoryArtifacts;
#[cfg(feature = "sqlite")]
pub use conversations::SqliteConversations;
pub use conversations::{ConversationStore, Conversations, MemoryConversations, Owner, TurnLease};
pub use records::{ActionRecord, ActionState, ConversationError, TurnRecord};
#[cfg(feature = "sqlite")]
pub use sqlite_knowledge::{SqliteKnowledge, MAX_ANSWERED_DOCUMENTS};
pub(crate) use states::ConversationStates;
