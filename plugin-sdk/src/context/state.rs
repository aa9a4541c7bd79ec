//! Conversation state: synchronous reads of a snapshot, writes kept until the call ends.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::value::RawValue;

/// A conversation's state as the engine stores it: JSON values by key, each kept as its
/// text (so that the bytes an engine counts are the bytes it holds, where a parsed
/// `Value` holds several times its text).
pub type StateMap = BTreeMap<String, Box<RawValue>>;

/// The conversation's state, for one call: take it as `state: &State`.
///
/// Reads come from the snapshot the engine took when the call started, with this call's
/// own writes on top. Writes are kept aside: the engine applies them to the conversation
/// only if the tool returns success, and drops them otherwise. So two calls in one turn
/// see each other's writes only when one finished (successfully) before the other started.
#[derive(Debug, Default)]
pub struct State {
    /// `None` for a state built by hand (`State::default()`, in a plugin's unit test):
    /// empty, without an allocation.
    snapshot: Option<Arc<StateMap>>,
    /// `None` marks a removal.
    writes: Mutex<StateWrites>,
}

/// What a call changed: each key set (`Some`, as JSON text) or removed (`None`).
pub type StateWrites = BTreeMap<String, Option<Box<RawValue>>>;

impl State {
    /// The state for a call that starts with `snapshot`; for engines.
    pub fn new(snapshot: Arc<StateMap>) -> Self {
        Self {
            snapshot: Some(snapshot),
            writes: Mutex::default(),
        }
    }

    /// The value at `key`, if there is one and it deserializes into `T`.
    pub fn get<T: DeserializeOwned>(&self, key: &str) -> Option<T> {
        let writes = self
            .writes
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let value = match writes.get(key) {
            Some(written) => written.as_deref()?,
            None => self.snapshot.as_ref()?.get(key)?,
        };
        serde_json::from_str(value.get()).ok()
    }

    /// Sets `key` to `value`, applied when the call succeeds.
    pub fn set<T: Serialize>(&self, key: &str, value: &T) -> Result<(), serde_json::Error> {
        let value = serde_json::value::to_raw_value(value)?;
        self.write(key, Some(value));
        Ok(())
    }

    /// Removes `key`, applied when the call succeeds.
    pub fn remove(&self, key: &str) {
        self.write(key, None);
    }

    fn write(&self, key: &str, value: Option<Box<RawValue>>) {
        self.writes
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(key.to_owned(), value);
    }

    /// This call's writes, for the engine to apply once the call succeeded.
    pub fn take_writes(&self) -> StateWrites {
        std::mem::take(
            &mut *self
                .writes
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        )
    }
}
