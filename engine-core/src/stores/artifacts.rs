//! The artifact store: bytes handed between tools of one conversation, in memory, each
//! taken once, before it expires.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use plugin_sdk::artifacts::{Artifact, ArtifactError, ArtifactHandle};
use plugin_sdk::engine::{ArtifactStore, BoxFuture};

use crate::config::ArtifactLimits;

/// The length of a handle: 128 random bits as hex.
const HANDLE_LEN: usize = 32;

/// What an entry costs beyond the lengths it holds (its slots in the maps, its expiry),
/// so that empty artifacts fill the capacity too.
const ENTRY_OVERHEAD: usize = 128;

/// Artifacts in memory, under [`ArtifactLimits`].
pub struct MemoryArtifacts {
    limits: ArtifactLimits,
    entries: Mutex<Entries>,
}

#[derive(Default)]
struct Entries {
    by_handle: HashMap<String, Entry>,
    /// Handles by expiry, soonest first: the front is what expired.
    by_expiry: BTreeSet<(Instant, String)>,
    /// Every entry's footprint, together.
    bytes: usize,
}

struct Entry {
    conversation: String,
    artifact: Artifact,
    /// `None`: the time-to-live is too long for the clock to represent, so never.
    expires: Option<Instant>,
}

impl Entry {
    /// Everything the entry holds, in bytes.
    fn footprint(&self) -> usize {
        footprint(&self.conversation, &self.artifact)
    }

    fn expired(&self, now: Instant) -> bool {
        self.expires.is_some_and(|expires| expires <= now)
    }
}

/// What `artifact` of `conversation` counts for against the store's capacity.
pub fn footprint(conversation: &str, artifact: &Artifact) -> usize {
    [
        artifact.bytes.len(),
        artifact.filename.len(),
        artifact.mime.len(),
        conversation.len(),
        HANDLE_LEN,
        ENTRY_OVERHEAD,
    ]
    .into_iter()
    .fold(0, usize::saturating_add)
}

impl MemoryArtifacts {
    /// An empty store.
    pub fn new(limits: ArtifactLimits) -> Self {
        Self {
            limits,
            entries: Mutex::default(),
        }
    }

    /// What the store holds now, in bytes, as counted against its capacity (see
    /// [`ArtifactLimits`]).
    pub fn held_bytes(&self) -> usize {
        self.lock().bytes
    }

    fn lock(&self) -> MutexGuard<'_, Entries> {
        self.entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Refuses what `limits` refuse of `artifact` on its own, before any store is asked.
pub fn check(limits: &ArtifactLimits, artifact: &Artifact) -> Result<(), ArtifactError> {
    let size = artifact.bytes.len();
    if size > limits.max_bytes {
        return Err(ArtifactError::TooLarge {
            size,
            limit: limits.max_bytes,
        });
    }
    for (what, name) in [
        ("filename", &artifact.filename),
        ("MIME type", &artifact.mime),
    ] {
        if name.len() > limits.max_name_bytes {
            return Err(ArtifactError::NameTooLong {
                what,
                size: name.len(),
                limit: limits.max_name_bytes,
            });
        }
    }
    Ok(())
}

impl Entries {
    fn remove(&mut self, handle: &str) -> Option<Entry> {
        let entry = self.by_handle.remove(handle)?;
        if let Some(expires) = entry.expires {
            self.by_expiry.remove(&(expires, handle.to_owned()));
        }
        self.bytes -= entry.footprint();
        Some(entry)
    }

    /// Frees every expired entry: the soonest to expire first, stopping at the first
    /// that has not.
    fn purge_expired(&mut self, now: Instant) {
        while let Some((expires, handle)) = self.by_expiry.first().cloned() {
            if expires > now {
                break;
            }
            self.remove(&handle);
        }
    }

    fn insert(&mut self, handle: String, entry: Entry) {
        self.bytes += entry.footprint();
        if let Some(expires) = entry.expires {
            self.by_expiry.insert((expires, handle.clone()));
        }
        self.by_handle.insert(handle, entry);
    }
}

/// 128 random bits as hex: a handle nobody guesses.
pub fn new_handle() -> String {
    let mut bytes = [0u8; HANDLE_LEN / 2];
    getrandom::fill(&mut bytes).expect("the system's random source answers");
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

impl MemoryArtifacts {
    /// Keeps `artifact` for `conversation` (see [`ArtifactStore::put`]).
    pub fn put(
        &self,
        conversation: &str,
        artifact: Artifact,
        ttl: Option<Duration>,
    ) -> Result<ArtifactHandle, ArtifactError> {
        check(&self.limits, &artifact)?;
        let size = footprint(conversation, &artifact);
        let now = Instant::now();
        let ttl = ttl.map_or(self.limits.ttl(), |ttl| ttl.min(self.limits.ttl()));
        let mut entries = self.lock();
        // Expired entries are freed on every put, not only when the store is full, so
        // they never outlive their time by much.
        entries.purge_expired(now);
        if entries.bytes.saturating_add(size) > self.limits.capacity_bytes {
            return Err(ArtifactError::StoreFull);
        }
        let handle = new_handle();
        entries.insert(
            handle.clone(),
            Entry {
                conversation: conversation.to_owned(),
                artifact,
                expires: now.checked_add(ttl),
            },
        );
        Ok(ArtifactHandle::new(handle))
    }

    /// Takes the artifact of `handle` (see [`ArtifactStore::take`]).
    pub fn take(&self, conversation: &str, handle: &ArtifactHandle) -> Option<Artifact> {
        self.take_within(conversation, handle, usize::MAX)
            .unwrap_or_default()
    }

    /// Takes the artifact of `handle` if it holds at most `max_bytes` (see
    /// [`ArtifactStore::take_within`]).
    pub fn take_within(
        &self,
        conversation: &str,
        handle: &ArtifactHandle,
        max_bytes: usize,
    ) -> Result<Option<Artifact>, ArtifactError> {
        let mut entries = self.lock();
        let Some(entry) = entries.by_handle.get(handle.as_str()) else {
            return Ok(None);
        };
        if entry.expired(Instant::now()) {
            entries.remove(handle.as_str());
            return Ok(None);
        }
        // Another conversation's handle is left in place: taking it there must not
        // consume it, and the answer must not differ from an unknown handle's.
        if entry.conversation != conversation {
            return Ok(None);
        }
        let size = entry.artifact.bytes.len();
        if size > max_bytes {
            return Err(ArtifactError::TooLarge {
                size,
                limit: max_bytes,
            });
        }
        Ok(entries.remove(handle.as_str()).map(|entry| entry.artifact))
    }
}

impl ArtifactStore for MemoryArtifacts {
    fn put<'a>(
        &'a self,
        conversation: &'a str,
        artifact: Artifact,
        ttl: Option<Duration>,
    ) -> BoxFuture<'a, Result<ArtifactHandle, ArtifactError>> {
        Box::pin(std::future::ready(MemoryArtifacts::put(
            self,
            conversation,
            artifact,
            ttl,
        )))
    }

    fn take<'a>(
        &'a self,
        conversation: &'a str,
        handle: &'a ArtifactHandle,
    ) -> BoxFuture<'a, Result<Option<Artifact>, ArtifactError>> {
        Box::pin(std::future::ready(Ok(MemoryArtifacts::take(
            self,
            conversation,
            handle,
        ))))
    }

    fn take_within<'a>(
        &'a self,
        conversation: &'a str,
        handle: &'a ArtifactHandle,
        max_bytes: usize,
    ) -> BoxFuture<'a, Result<Option<Artifact>, ArtifactError>> {
        Box::pin(std::future::ready(MemoryArtifacts::take_within(
            self,
            conversation,
            handle,
            max_bytes,
        )))
    }
}
