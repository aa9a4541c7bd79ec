//! The OAuth broker's grants and sign-ins under way in the shared database, sealed by the
//! engine before they reach it: a callback lands on any replica, and a sign-in is taken
//! once whichever replica takes it.

use std::sync::Arc;

use engine_core::oauth::{now_secs, GrantKey, GrantStore, GrantStoreError};
use plugin_sdk::engine::BoxFuture;

use super::{DatabaseError, Postgres};

/// The grants in the shared database.
pub struct PostgresGrants(Arc<Postgres>);

impl PostgresGrants {
    /// Grants in `database`.
    pub fn new(database: Arc<Postgres>) -> Self {
        Self(database)
    }
}

fn failed(error: DatabaseError) -> GrantStoreError {
    GrantStoreError(error.to_string())
}

impl GrantStore for PostgresGrants {
    fn grant<'a>(
        &'a self,
        key: &'a GrantKey,
    ) -> BoxFuture<'a, Result<Option<Vec<u8>>, GrantStoreError>> {
        Box::pin(async move {
            let database = &self.0;
            database
                .bounded(async {
                    let row = database
                        .connection()
                        .await?
                        .query_opt(
                            "SELECT sealed FROM oauth_grants
                             WHERE agent = $1 AND subscriber = $2 AND provider = $3",
                            &[&key.agent, &key.subscriber, &key.provider],
                        )
                        .await?;
                    Ok(row.map(|row| row.get(0)))
                })
                .await
                .map_err(failed)
        })
    }

    fn put_grant<'a>(
        &'a self,
        key: &'a GrantKey,
        sealed: Vec<u8>,
    ) -> BoxFuture<'a, Result<(), GrantStoreError>> {
        Box::pin(async move {
            let database = &self.0;
            database
                .bounded(async {
                    database
                        .connection()
                        .await?
                        .execute(
                            "INSERT INTO oauth_grants (agent, subscriber, provider, sealed)
                             VALUES ($1, $2, $3, $4)
                             ON CONFLICT (agent, subscriber, provider)
                             DO UPDATE SET sealed = excluded.sealed",
                            &[&key.agent, &key.subscriber, &key.provider, &sealed],
                        )
                        .await?;
                    Ok(())
                })
                .await
                .map_err(failed)
        })
    }

    fn delete_grant<'a>(
        &'a self,
        key: &'a GrantKey,
    ) -> BoxFuture<'a, Result<bool, GrantStoreError>> {
        Box::pin(async move {
            let database = &self.0;
            database
                .bounded(async {
                    let deleted = database
                        .connection()
                        .await?
                        .execute(
                            "DELETE FROM oauth_grants
                             WHERE agent = $1 AND subscriber = $2 AND provider = $3",
                            &[&key.agent, &key.subscriber, &key.provider],
                        )
                        .await?;
                    Ok(deleted > 0)
                })
                .await
                .map_err(failed)
        })
    }

    fn put_pending<'a>(
        &'a self,
        id: &'a str,
        sealed: Vec<u8>,
        expires_at: i64,
    ) -> BoxFuture<'a, Result<(), GrantStoreError>> {
        Box::pin(async move {
            let database = &self.0;
            database
                .bounded(async {
                    let connection = database.connection().await?;
                    connection
                        .execute(
                            "DELETE FROM oauth_pending WHERE expires_at <= $1",
                            &[&now_secs()],
                        )
                        .await?;
                    connection
                        .execute(
                            "INSERT INTO oauth_pending (id, sealed, expires_at) VALUES ($1, $2, $3)",
                            &[&id, &sealed, &expires_at],
                        )
                        .await?;
                    Ok(())
                })
                .await
                .map_err(failed)
        })
    }

    fn pending<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<Vec<u8>>, GrantStoreError>> {
        Box::pin(async move {
            let database = &self.0;
            database
                .bounded(async {
                    let row = database
                        .connection()
                        .await?
                        .query_opt(
                            "SELECT sealed FROM oauth_pending WHERE id = $1 AND expires_at > $2",
                            &[&id, &now_secs()],
                        )
                        .await?;
                    Ok(row.map(|row| row.get(0)))
                })
                .await
                .map_err(failed)
        })
    }

    fn take_pending<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<Vec<u8>>, GrantStoreError>> {
        Box::pin(async move {
            let database = &self.0;
            database
                .bounded(async {
                    // One statement takes it: two replicas with one callback, one gets it.
                    let row = database
                        .connection()
                        .await?
                        .query_opt(
                            "DELETE FROM oauth_pending WHERE id = $1 RETURNING sealed, expires_at",
                            &[&id],
                        )
                        .await?;
                    Ok(row
                        .filter(|row| row.get::<_, i64>(1) > now_secs())
                        .map(|row| row.get(0)))
                })
                .await
                .map_err(failed)
        })
    }
}
