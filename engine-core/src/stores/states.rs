//! Conversation state, kept by the engine: a snapshot per call, writes applied after a
//! successful call, in the order calls finish, under [`StateLimits`]; a conversation idle
//! for longer than the limit says is dropped whole.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

use plugin_sdk::engine::{StateMap, StateWrites};
use serde_json::value::RawValue;
// Tokio's clock, which a test can move, rather than waiting out an idle limit.
use tokio::time::Instant;

use crate::config::StateLimits;

/// What a conversation's state holds beyond its keys, its values and its id (which it
/// holds twice): its map's first node, about 450 bytes however few keys it has; its
/// entries in the table by id and in the idle order, up to about 200 bytes as those grow
/// by doubling; its `Arc`. So that many small conversations count for what they hold.
const CONVERSATION_OVERHEAD: usize = 640;

/// What a key holds beyond its text and its value's text: its `String` and its value's
/// box in the map's nodes (40 bytes, in nodes that may be half full), and the allocator's
/// rounding of the two texts. So that many small keys count for what they hold.
const KEY_OVERHEAD: usize = 96;

/// Why a call's writes were not applied.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum StateRefusal {
    /// A value is larger than the limit.
    #[error("the value of `{key}` is {size} bytes as JSON, and a value may be at most {limit}: keep less in state")]
    ValueTooLarge {
        key: String,
        size: usize,
        limit: usize,
    },
    /// The conversation would hold too many keys.
    #[error("the conversation's state would hold {keys} keys, and it may hold at most {limit}: remove keys it no longer needs")]
    TooManyKeys { keys: usize, limit: usize },
    /// The conversation would hold too many bytes.
    #[error("the conversation's state would be {size} bytes, and it may be at most {limit}: remove keys it no longer needs")]
    ConversationFull { size: usize, limit: usize },
    /// Every conversation together would hold too many bytes.
    #[error("the engine's conversation state is full; try again later")]
    StoreFull,
}

/// The state of every conversation, in memory.
pub(crate) struct ConversationStates {
    limits: StateLimits,
    inner: Mutex<Conversations>,
}

#[derive(Default)]
struct Conversations {
    by_id: HashMap<String, Conversation>,
    /// Conversations by last use, oldest first: the front is what idles out.
    by_last_use: BTreeSet<(Instant, String)>,
    /// Every conversation's footprint, together.
    bytes: usize,
}

struct Conversation {
    state: Arc<StateMap>,
    last_use: Instant,
    /// Its keys and values as JSON, each key with [`KEY_OVERHEAD`], plus its id twice
    /// and [`CONVERSATION_OVERHEAD`].
    bytes: usize,
}

impl ConversationStates {
    /// No state yet, under `limits`.
    pub(crate) fn new(limits: StateLimits) -> Self {
        Self {
            limits,
            inner: Mutex::default(),
        }
    }

    /// The state of `conversation` now: what a call that starts now reads. Reading
    /// counts as use: it keeps the conversation from idling out.
    pub(crate) fn snapshot(&self, conversation: &str) -> Arc<StateMap> {
        let now = Instant::now();
        let mut inner = self.lock();
        inner.drop_idle(now, &self.limits);
        let Some(entry) = inner.by_id.get_mut(conversation) else {
            return Arc::default();
        };
        let state = Arc::clone(&entry.state);
        let last_use = std::mem::replace(&mut entry.last_use, now);
        inner.reorder(conversation, last_use, now);
        state
    }

    /// Makes `state` the whole of `conversation`'s state: keys it lacks are removed.
    pub(crate) fn replace(&self, conversation: &str, state: StateMap) -> Result<(), StateRefusal> {
        let mut writes: StateWrites = self
            .snapshot(conversation)
            .keys()
            .filter(|key| !state.contains_key(*key))
            .map(|key| (key.clone(), None))
            .collect();
        writes.extend(state.into_iter().map(|(key, value)| (key, Some(value))));
        self.apply(conversation, writes)
    }

    /// Applies a successful call's writes: each key set or removed, over whatever other
    /// calls applied since this one started (last writer wins, per key). Writes that
    /// would break a limit are refused, all of them.
    pub(crate) fn apply(
        &self,
        conversation: &str,
        writes: StateWrites,
    ) -> Result<(), StateRefusal> {
        if writes.is_empty() {
            return Ok(());
        }
        let limits = &self.limits;
        for (key, value) in &writes {
            let size = value.as_ref().map_or(0, |value| value.get().len());
            if size > limits.max_value_bytes {
                return Err(StateRefusal::ValueTooLarge {
                    key: key.clone(),
                    size,
                    limit: limits.max_value_bytes,
                });
            }
        }
        let now = Instant::now();
        let mut inner = self.lock();
        inner.drop_idle(now, limits);
        let empty = StateMap::new();
        let (current, current_bytes) = match inner.by_id.get(conversation) {
            Some(entry) => (&*entry.state, entry.bytes),
            None => (&empty, 0),
        };
        // What the state would be, counted before anything changes, so that refused
        // writes leave no trace.
        let mut keys = current.len();
        let mut bytes = if current_bytes == 0 {
            CONVERSATION_OVERHEAD + 2 * conversation.len()
        } else {
            current_bytes
        };
        for (key, value) in &writes {
            match (current.get(key), value) {
                (Some(old), _) => bytes -= entry_size(key, old),
                (None, Some(_)) => keys += 1,
                (None, None) => {}
            }
            match (current.contains_key(key), value) {
                (_, Some(value)) => bytes += entry_size(key, value),
                (true, None) => keys -= 1,
                (false, None) => {}
            }
        }
        if keys > limits.max_keys {
            return Err(StateRefusal::TooManyKeys {
                keys,
                limit: limits.max_keys,
            });
        }
        if bytes > limits.max_conversation_bytes {
            return Err(StateRefusal::ConversationFull {
                size: bytes,
                limit: limits.max_conversation_bytes,
            });
        }
        if (inner.bytes - current_bytes).saturating_add(bytes) > limits.capacity_bytes {
            return Err(StateRefusal::StoreFull);
        }
        let mut state = inner.remove(conversation).unwrap_or_default();
        let map = Arc::make_mut(&mut state);
        for (key, value) in writes {
            match value {
                Some(value) => map.insert(key, value),
                None => map.remove(&key),
            };
        }
        // An emptied state is no state: nothing to keep, nothing to idle out.
        if !state.is_empty() {
            inner.insert(conversation, state, bytes, now);
        }
        Ok(())
    }

    fn lock(&self) -> MutexGuard<'_, Conversations> {
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Conversations {
    /// Drops every conversation unused for longer than the limit.
    fn drop_idle(&mut self, now: Instant, limits: &StateLimits) {
        // A limit too large to subtract from now means nothing is idle yet.
        let Some(cutoff) = now.checked_sub(limits.idle()) else {
            return;
        };
        while let Some((last_use, conversation)) = self.by_last_use.first().cloned() {
            if last_use > cutoff {
                break;
            }
            self.remove(&conversation);
        }
    }

    /// Moves `conversation` from `before` to `now` in the idle order.
    fn reorder(&mut self, conversation: &str, before: Instant, now: Instant) {
        self.by_last_use.remove(&(before, conversation.to_owned()));
        self.by_last_use.insert((now, conversation.to_owned()));
    }

    /// Takes `conversation` out, answering its state.
    fn remove(&mut self, conversation: &str) -> Option<Arc<StateMap>> {
        let entry = self.by_id.remove(conversation)?;
        self.by_last_use
            .remove(&(entry.last_use, conversation.to_owned()));
        self.bytes -= entry.bytes;
        Some(entry.state)
    }

    fn insert(&mut self, conversation: &str, state: Arc<StateMap>, bytes: usize, now: Instant) {
        self.bytes += bytes;
        self.by_last_use.insert((now, conversation.to_owned()));
        self.by_id.insert(
            conversation.to_owned(),
            Conversation {
                state,
                last_use: now,
                bytes,
            },
        );
    }
}

/// What `key` set to `value` holds: both texts and [`KEY_OVERHEAD`].
fn entry_size(key: &str, value: &RawValue) -> usize {
    key.len() + value.get().len() + KEY_OVERHEAD
}

#[cfg(test)]
mod tests {
    use plugin_sdk::state::State;
    use serde::Serialize;

    use super::*;
    use crate::stores::held_bytes::held_by;

    #[test]
    fn a_conversation_is_counted_at_least_as_the_bytes_it_holds() {
        fn set(states: &ConversationStates, conversation: &str, key: &str, value: impl Serialize) {
            let state = State::default();
            state.set(key, &value).unwrap();
            states.apply(conversation, state.take_writes()).unwrap();
        }
        let states = ConversationStates::new(StateLimits::default());
        // The store's own tables start with a first conversation: not one's to count.
        set(&states, "first", "k", 1);
        let before = states.lock().bytes;
        let ((), held) = held_by(|| {
            // Arrays of small numbers: a parsed JSON value holds many times their text.
            for key in ["a", "b", "c"] {
                set(&states, "arrays", key, vec![0u8; 10_000]);
            }
            // Small conversations: what they hold is mostly overhead.
            for conversation in 0..20 {
                set(&states, &format!("small-{conversation}"), "k", 1);
            }
        });
        let counted = states.lock().bytes - before;
        assert!(
            usize::try_from(held).unwrap() <= counted,
            "counted {counted} bytes, holds {held}"
        );
    }
}
