//! Conversation state, kept by the engine: a snapshot per call, writes applied after a
//! successful call, in the order calls finish.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use plugin_sdk::engine::{StateMap, StateWrites};

/// The state of every conversation, in memory.
#[derive(Default)]
pub(crate) struct ConversationStates {
    by_conversation: Mutex<HashMap<String, Arc<StateMap>>>,
}

impl ConversationStates {
    /// The state of `conversation` now: what a call that starts now reads.
    pub(crate) fn snapshot(&self, conversation: &str) -> Arc<StateMap> {
        self.lock().get(conversation).cloned().unwrap_or_default()
    }

    /// Applies a successful call's writes: each key set or removed, over whatever other
    /// calls applied since this one started (last writer wins, per key).
    pub(crate) fn apply(&self, conversation: &str, writes: StateWrites) {
        if writes.is_empty() {
            return;
        }
        let mut states = self.lock();
        let state = states.entry(conversation.to_owned()).or_default();
        let state = Arc::make_mut(state);
        for (key, value) in writes {
            match value {
                Some(value) => state.insert(key, value),
                None => state.remove(&key),
            };
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<StateMap>>> {
        self.by_conversation
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
