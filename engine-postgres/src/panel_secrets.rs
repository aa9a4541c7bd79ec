//! The secrets the admin panel sets, in the shared database: every replica reads them at
//! start-up and at each reload (engine-cli follows them while it serves), so each equips
//! what the panel of any gave. Kept as the configuration file keeps secrets: give the
//! database's access to no one who may not read them.

use std::sync::Arc;

use engine_core::stores::{PanelSecretStore, PanelSecretValues};
use engine_core::BackendError;
use plugin_sdk::engine::BoxFuture;

use super::Postgres;

/// The admin panel's secrets in the shared database.
pub struct PostgresPanelSecrets(Arc<Postgres>);

impl PostgresPanelSecrets {
    /// The panel's secrets in `database`.
    pub fn new(database: Arc<Postgres>) -> Self {
        Self(database)
    }
}

impl PanelSecretStore for PostgresPanelSecrets {
    fn load(&self) -> BoxFuture<'_, Result<PanelSecretValues, BackendError>> {
        Box::pin(async move {
            let database = &self.0;
            database
                .bounded(async {
                    let rows = database
                        .connection()
                        .await?
                        .query("SELECT agent, key, value FROM panel_secrets", &[])
                        .await?;
                    let mut values = PanelSecretValues::new();
                    for row in rows {
                        values
                            .entry(row.get(0))
                            .or_default()
                            .insert(row.get(1), row.get(2));
                    }
                    Ok(values)
                })
                .await
                .map_err(BackendError::new)
        })
    }

    fn set<'a>(
        &'a self,
        agent: &'a str,
        key: &'a str,
        value: Option<&'a str>,
    ) -> BoxFuture<'a, Result<(), BackendError>> {
        Box::pin(async move {
            let database = &self.0;
            database
                .bounded(async {
                    let connection = database.connection().await?;
                    match value {
                        Some(value) => connection
                            .execute(
                                "INSERT INTO panel_secrets (agent, key, value) VALUES ($1, $2, $3)
                                     ON CONFLICT (agent, key) DO UPDATE SET value = excluded.value",
                                &[&agent, &key, &value],
                            )
                            .await?,
                        None => {
                            connection
                                .execute(
                                    "DELETE FROM panel_secrets WHERE agent = $1 AND key = $2",
                                    &[&agent, &key],
                                )
                                .await?
                        }
                    };
                    Ok(())
                })
                .await
                .map_err(BackendError::new)
        })
    }
}
