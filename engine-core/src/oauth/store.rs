//! Where grants and sign-ins under way are kept: sealed bytes only (see `sealed`), by
//! the agent, subscriber and provider a grant is for, or by a sign-in's id. SQLite under
//! the data directory (`engine-sqlite`), or the shared PostgreSQL (`engine-postgres`).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use plugin_sdk::engine::BoxFuture;

/// Whose grant: the agent, the subscriber, and the provider (`<namespace>:<id>`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GrantKey {
    /// The agent.
    pub agent: String,
    /// The subscriber.
    pub subscriber: String,
    /// The provider, as `<namespace>:<id>`.
    pub provider: String,
}

impl GrantKey {
    /// What a grant's seal is bound to: a row moved to another key does not open.
    pub(crate) fn bound(&self) -> String {
        format!(
            "grant\0{}\0{}\0{}",
            self.agent, self.subscriber, self.provider
        )
    }
}

/// A store that could not answer.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the OAuth grant store failed: {0}")]
pub struct GrantStoreError(pub String);

/// The seconds since the epoch, as stores compare expiries.
pub fn now_secs() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_secs()).unwrap_or(i64::MAX)
        })
}

/// Sealed grants and sign-ins. Every method is one statement's work: a replica that dies
/// mid-way leaves each row whole.
pub trait GrantStore: Send + Sync {
    /// The sealed grant of `key`, if any.
    fn grant<'a>(
        &'a self,
        key: &'a GrantKey,
    ) -> BoxFuture<'a, Result<Option<Vec<u8>>, GrantStoreError>>;

    /// Keeps `sealed` as the grant of `key`, in place of any.
    fn put_grant<'a>(
        &'a self,
        key: &'a GrantKey,
        sealed: Vec<u8>,
    ) -> BoxFuture<'a, Result<(), GrantStoreError>>;

    /// Forgets the grant of `key`; whether there was one.
    fn delete_grant<'a>(
        &'a self,
        key: &'a GrantKey,
    ) -> BoxFuture<'a, Result<bool, GrantStoreError>>;

    /// Keeps `sealed` as the sign-in `id` until `expires_at` (seconds since the epoch),
    /// and drops the sign-ins that expired.
    fn put_pending<'a>(
        &'a self,
        id: &'a str,
        sealed: Vec<u8>,
        expires_at: i64,
    ) -> BoxFuture<'a, Result<(), GrantStoreError>>;

    /// The sign-in `id`, left in place, before it expires.
    fn pending<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<Vec<u8>>, GrantStoreError>>;

    /// Takes the sign-in `id`: once, before it expires.
    fn take_pending<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<Vec<u8>>, GrantStoreError>>;
}

/// Grants in memory, gone with the process: for tests and engines that keep nothing.
#[derive(Default)]
pub struct MemoryGrants {
    grants: Mutex<HashMap<GrantKey, Vec<u8>>>,
    pending: Mutex<HashMap<String, (Vec<u8>, i64)>>,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Every change is one insert or remove: a panic leaves nothing half-made.
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl GrantStore for MemoryGrants {
    fn grant<'a>(
        &'a self,
        key: &'a GrantKey,
    ) -> BoxFuture<'a, Result<Option<Vec<u8>>, GrantStoreError>> {
        let found = lock(&self.grants).get(key).cloned();
        Box::pin(async move { Ok(found) })
    }

    fn put_grant<'a>(
        &'a self,
        key: &'a GrantKey,
        sealed: Vec<u8>,
    ) -> BoxFuture<'a, Result<(), GrantStoreError>> {
        lock(&self.grants).insert(key.clone(), sealed);
        Box::pin(async { Ok(()) })
    }

    fn delete_grant<'a>(
        &'a self,
        key: &'a GrantKey,
    ) -> BoxFuture<'a, Result<bool, GrantStoreError>> {
        let had = lock(&self.grants).remove(key).is_some();
        Box::pin(async move { Ok(had) })
    }

    fn put_pending<'a>(
        &'a self,
        id: &'a str,
        sealed: Vec<u8>,
        expires_at: i64,
    ) -> BoxFuture<'a, Result<(), GrantStoreError>> {
        let mut pending = lock(&self.pending);
        let now = now_secs();
        pending.retain(|_, (_, expires)| *expires > now);
        pending.insert(id.to_owned(), (sealed, expires_at));
        Box::pin(async { Ok(()) })
    }

    fn pending<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<Vec<u8>>, GrantStoreError>> {
        let found = lock(&self.pending)
            .get(id)
            .filter(|(_, expires)| *expires > now_secs())
            .map(|(sealed, _)| sealed.clone());
        Box::pin(async move { Ok(found) })
    }

    fn take_pending<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<Vec<u8>>, GrantStoreError>> {
        let taken = lock(&self.pending)
            .remove(id)
            .filter(|(_, expires)| *expires > now_secs())
            .map(|(sealed, _)| sealed);
        Box::pin(async move { Ok(taken) })
    }
}
