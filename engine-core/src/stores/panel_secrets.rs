//! The secrets the admin panel sets, where replicas share them: the engine's image reads
//! them before it builds the engine and at every reload, so a replica equips what
//! another was given (engine-cli keeps them in a file under the data directory when
//! there is no shared database).

use std::collections::BTreeMap;

use plugin_sdk::engine::BoxFuture;

use crate::BackendError;

/// Secret values by agent, then key.
pub type PanelSecretValues = BTreeMap<String, BTreeMap<String, String>>;

/// Where the admin panel keeps the secrets it sets when replicas share a database.
pub trait PanelSecretStore: Send + Sync {
    /// Every value kept.
    fn load(&self) -> BoxFuture<'_, Result<PanelSecretValues, BackendError>>;

    /// Keeps `value` as `agent`'s secret `key`, or forgets it (`None`).
    fn set<'a>(
        &'a self,
        agent: &'a str,
        key: &'a str,
        value: Option<&'a str>,
    ) -> BoxFuture<'a, Result<(), BackendError>>;
}
