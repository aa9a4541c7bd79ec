//! The stores an engine keeps for its turns and tools, as traits a backend implements
//! (conversations here, knowledge and artifacts in plugin-sdk's engine contract), with
//! their memory implementations and the rules every backend shares. SQLite and
//! PostgreSQL are crates of their own (`engine-sqlite`, `engine-postgres`).

pub mod artifacts;
pub mod conversations;
#[cfg(test)]
#[allow(unsafe_code)]
mod held_bytes;
pub mod knowledge;
mod panel_secrets;
mod records;
mod states;

pub use artifacts::MemoryArtifacts;
pub use conversations::{
    ConversationPage, ConversationStore, ConversationSummary, Conversations, MemoryConversations,
    Owner, RecentCursor, TurnLease, MAX_CONVERSATIONS_PAGE,
};
pub use knowledge::{MemoryKnowledge, MAX_ANSWERED_DOCUMENTS};
pub use panel_secrets::{PanelSecretStore, PanelSecretValues};
pub use records::{ActionRecord, ActionState, ConversationError, TurnRecord, INTERRUPTED};
pub(crate) use states::{ConversationStates, StateRefusal};
