//! A conversation's state, brought back from its store when a turn or a kept call holds
//! it.

use super::Runtime;
use crate::stores::{ConversationError, Conversations, StateRefusal};

/// Why a conversation's stored state could not be brought back.
#[derive(Debug, thiserror::Error)]
pub(super) enum RestoreError {
    /// The store could not be read.
    #[error(transparent)]
    Read(#[from] ConversationError),
    /// What the store holds is not a state.
    #[error("it is not a JSON object of keys and values: {0}")]
    Unreadable(#[from] serde_json::Error),
    /// It does not fit this engine's state limits.
    #[error(transparent)]
    Refused(#[from] StateRefusal),
}

impl Runtime {
    /// Brings back the state `conversation`'s tools kept, as the store holds it: at the
    /// end of its last turn (or call) in any process or replica sharing the store, which
    /// is newer than what this process remembers (another process may have written it
    /// since). A stored state that cannot be read or taken in fails the turn (`Err`),
    /// since going on would store this process's older state over it. A store of this
    /// process only (memory) is not read: what it holds is what this process remembers.
    /// None stored: empty.
    pub(super) async fn restore_state(
        &self,
        store: &Conversations,
        conversation: &str,
    ) -> Result<(), RestoreError> {
        if !store.keeps_state() {
            return Ok(());
        }
        let state = match store.load_state(conversation).await? {
            Some(stored) => serde_json::from_str(&stored)?,
            None => Default::default(),
        };
        Ok(self.states.replace(conversation, state)?)
    }
}
