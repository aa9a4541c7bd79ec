//! The stores an engine keeps for its tools: conversation state and artifacts in memory,
//! and the embedded knowledge store (SQLite, with the `sqlite` feature).

mod artifacts;
mod conversations;
#[cfg(test)]
#[allow(unsafe_code)]
mod held_bytes;
#[cfg(feature = "sqlite")]
mod sqlite_knowledge;
mod states;

pub use artifacts::MemoryArtifacts;
pub use conversations::{ActionRecord, ActionState, ConversationError, Conversations};
#[cfg(feature = "sqlite")]
pub use sqlite_knowledge::{SqliteKnowledge, MAX_ANSWERED_DOCUMENTS};
pub(crate) use states::ConversationStates;
