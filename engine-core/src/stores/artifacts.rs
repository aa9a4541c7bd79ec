//! The artifact store: bytes handed between tools of one conversation, in memory, each
//! taken once, before it expires.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use plugin_sdk::artifacts::{Artifact, ArtifactError, ArtifactHandle};
use plugin_sdk::engine::ArtifactStore;

use crate::config::ArtifactLimits;

/// Artifacts in memory, under [`ArtifactLimits`].
pub struct MemoryArtifacts {
    limits: ArtifactLimits,
    entries: Mutex<Entries>,
}

#[derive(Default)]
struct Entries {
    by_handle: HashMap<String, Entry>,
    bytes: usize,
}

struct Entry {
    conversation: String,
    artifact: Artifact,
    expires: Instant,
}

impl MemoryArtifacts {
    /// An empty store.
    pub fn new(limits: ArtifactLimits) -> Self {
        Self {
            limits,
            entries: Mutex::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Entries> {
        self.entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Entries {
    fn remove(&mut self, handle: &str) -> Option<Entry> {
        let entry = self.by_handle.remove(handle)?;
        self.bytes -= entry.artifact.bytes.len();
        Some(entry)
    }

    fn purge_expired(&mut self, now: Instant) {
        let expired: Vec<String> = self
            .by_handle
            .iter()
            .filter(|(_, entry)| entry.expires <= now)
            .map(|(handle, _)| handle.clone())
            .collect();
        for handle in expired {
            self.remove(&handle);
        }
    }
}

/// 128 random bits as hex: a handle nobody guesses.
fn new_handle() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the system's random source answers");
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

impl ArtifactStore for MemoryArtifacts {
    fn put(
        &self,
        conversation: &str,
        artifact: Artifact,
        ttl: Option<Duration>,
    ) -> Result<ArtifactHandle, ArtifactError> {
        let size = artifact.bytes.len();
        if size > self.limits.max_bytes {
            return Err(ArtifactError::TooLarge {
                size,
                limit: self.limits.max_bytes,
            });
        }
        let now = Instant::now();
        let ttl = ttl.map_or(self.limits.ttl(), |ttl| ttl.min(self.limits.ttl()));
        let mut entries = self.lock();
        if entries.bytes + size > self.limits.capacity_bytes {
            entries.purge_expired(now);
            if entries.bytes + size > self.limits.capacity_bytes {
                return Err(ArtifactError::StoreFull);
            }
        }
        let handle = new_handle();
        entries.bytes += size;
        entries.by_handle.insert(
            handle.clone(),
            Entry {
                conversation: conversation.to_owned(),
                artifact,
                expires: now + ttl,
            },
        );
        Ok(ArtifactHandle::new(handle))
    }

    fn take(&self, conversation: &str, handle: &ArtifactHandle) -> Option<Artifact> {
        let mut entries = self.lock();
        let entry = entries.by_handle.get(handle.as_str())?;
        if entry.expires <= Instant::now() {
            entries.remove(handle.as_str());
            return None;
        }
        // Another conversation's handle is left in place: taking it there must not
        // consume it, and the answer must not differ from an unknown handle's.
        if entry.conversation != conversation {
            return None;
        }
        entries.remove(handle.as_str()).map(|entry| entry.artifact)
    }
}
