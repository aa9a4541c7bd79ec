//! The OAuth broker's grants and sign-ins under way, sealed by the engine before they
//! reach this file (`oauth.sqlite` under the data directory): the store holds bytes it
//! cannot read.

use std::path::Path;
use std::sync::{Arc, Mutex};

use engine_core::oauth::{now_secs, GrantKey, GrantStore, GrantStoreError};
use plugin_sdk::engine::BoxFuture;
use rusqlite::{params, Connection, OptionalExtension};

/// The grants in one SQLite file. Its work runs on Tokio's blocking pool.
pub struct SqliteGrants {
    connection: Arc<Mutex<Connection>>,
}

fn failed(error: rusqlite::Error) -> GrantStoreError {
    GrantStoreError(error.to_string())
}

impl SqliteGrants {
    /// Opens (or creates) the store at `path`.
    pub fn open(path: &Path) -> Result<Self, GrantStoreError> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|error| GrantStoreError(error.to_string()))?;
        }
        let connection = Connection::open(path).map_err(failed)?;
        crate::knowledge::connections::configure(&connection, std::time::Duration::from_secs(5))
            .map_err(failed)?;
        connection
            .execute_batch(
                "CREATE TABLE IF NOT EXISTS grants (
                     agent TEXT NOT NULL,
                     subscriber TEXT NOT NULL,
                     provider TEXT NOT NULL,
                     sealed BLOB NOT NULL,
                     PRIMARY KEY (agent, subscriber, provider)
                 );
                 CREATE TABLE IF NOT EXISTS pending (
                     id TEXT PRIMARY KEY,
                     sealed BLOB NOT NULL,
                     expires_at INTEGER NOT NULL
                 );
                 CREATE INDEX IF NOT EXISTS pending_by_expiry ON pending (expires_at);",
            )
            .map_err(failed)?;
        Ok(Self {
            connection: Arc::new(Mutex::new(connection)),
        })
    }

    async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T, GrantStoreError> {
        let connection = Arc::clone(&self.connection);
        tokio::task::spawn_blocking(move || {
            let connection = connection
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            work(&connection).map_err(failed)
        })
        .await
        .map_err(|error| GrantStoreError(error.to_string()))?
    }
}

impl GrantStore for SqliteGrants {
    fn grant<'a>(
        &'a self,
        key: &'a GrantKey,
    ) -> BoxFuture<'a, Result<Option<Vec<u8>>, GrantStoreError>> {
        let key = key.clone();
        Box::pin(self.run(move |connection| {
            connection
                .query_row(
                    "SELECT sealed FROM grants WHERE agent = ?1 AND subscriber = ?2 AND provider = ?3",
                    params![key.agent, key.subscriber, key.provider],
                    |row| row.get(0),
                )
                .optional()
        }))
    }

    fn put_grant<'a>(
        &'a self,
        key: &'a GrantKey,
        sealed: Vec<u8>,
    ) -> BoxFuture<'a, Result<(), GrantStoreError>> {
        let key = key.clone();
        Box::pin(self.run(move |connection| {
            connection
                .execute(
                    "INSERT INTO grants (agent, subscriber, provider, sealed) VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT (agent, subscriber, provider) DO UPDATE SET sealed = excluded.sealed",
                    params![key.agent, key.subscriber, key.provider, sealed],
                )
                .map(drop)
        }))
    }

    fn delete_grant<'a>(
        &'a self,
        key: &'a GrantKey,
    ) -> BoxFuture<'a, Result<bool, GrantStoreError>> {
        let key = key.clone();
        Box::pin(self.run(move |connection| {
            connection
                .execute(
                    "DELETE FROM grants WHERE agent = ?1 AND subscriber = ?2 AND provider = ?3",
                    params![key.agent, key.subscriber, key.provider],
                )
                .map(|deleted| deleted > 0)
        }))
    }

    fn put_pending<'a>(
        &'a self,
        id: &'a str,
        sealed: Vec<u8>,
        expires_at: i64,
    ) -> BoxFuture<'a, Result<(), GrantStoreError>> {
        let id = id.to_owned();
        Box::pin(self.run(move |connection| {
            connection.execute("DELETE FROM pending WHERE expires_at <= ?1", [now_secs()])?;
            connection
                .execute(
                    "INSERT INTO pending (id, sealed, expires_at) VALUES (?1, ?2, ?3)",
                    params![id, sealed, expires_at],
                )
                .map(drop)
        }))
    }

    fn pending<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<Vec<u8>>, GrantStoreError>> {
        let id = id.to_owned();
        Box::pin(self.run(move |connection| {
            connection
                .query_row(
                    "SELECT sealed FROM pending WHERE id = ?1 AND expires_at > ?2",
                    params![id, now_secs()],
                    |row| row.get(0),
                )
                .optional()
        }))
    }

    fn take_pending<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<Vec<u8>>, GrantStoreError>> {
        let id = id.to_owned();
        // One statement takes it: two callbacks with one sign-in, one gets it.
        Box::pin(self.run(move |connection| {
            connection
                .query_row(
                    "DELETE FROM pending WHERE id = ?1 RETURNING sealed, expires_at",
                    [id],
                    |row| Ok((row.get::<_, Vec<u8>>(0)?, row.get::<_, i64>(1)?)),
                )
                .optional()
                .map(|taken| {
                    taken
                        .filter(|(_, expires_at)| *expires_at > now_secs())
                        .map(|(sealed, _)| sealed)
                })
        }))
    }
}
