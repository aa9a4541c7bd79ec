//! Artifacts on PostgreSQL: put on one replica, taken on any, once (the take deletes the
//! row it answers). Expired rows are deleted on every put. The capacity is counted over
//! every replica's artifacts; two puts at the same moment may both fit where only one
//! would, by at most one artifact each.

use std::sync::Arc;
use std::time::Duration;

use plugin_sdk::artifacts::{Artifact, ArtifactError, ArtifactHandle};
use plugin_sdk::engine::{ArtifactStore, BoxFuture};

use super::{DatabaseError, Postgres};
use engine_core::config::ArtifactLimits;
use engine_core::stores::artifacts::{check, footprint, new_handle};

/// Deletes the expired artifacts and keeps the one given, if it fits beside the others
/// that have not expired: `$1` the handle, `$2` the conversation, `$3` to `$5` the file,
/// `$6` its footprint, `$7` its lifetime in seconds, `$8` the capacity. One statement,
/// so one round trip.
const PUT: &str = "WITH expired AS (DELETE FROM artifacts WHERE expires_at <= now())
     INSERT INTO artifacts (handle, conversation, filename, mime, bytes, footprint, expires_at)
     SELECT $1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7)
     WHERE (SELECT COALESCE(SUM(footprint), 0)::BIGINT FROM artifacts WHERE expires_at > now())
           + $6 <= $8";

/// Takes (deletes and answers) the artifact `$1` of the conversation `$2`, unless it
/// expired.
const TAKE: &str = "DELETE FROM artifacts
     WHERE handle = $1 AND conversation = $2 AND expires_at > now()
     RETURNING filename, mime, bytes";

/// As `TAKE`, for an artifact of at most `$3` bytes: no row for an unknown handle, and
/// a row with its size alone for one left in place as too large.
const TAKE_WITHIN: &str = "WITH found AS (
         SELECT handle, octet_length(bytes)::int8 AS size FROM artifacts
          WHERE handle = $1 AND conversation = $2 AND expires_at > now()
          FOR UPDATE),
     taken AS (
         DELETE FROM artifacts USING found
          WHERE artifacts.handle = found.handle AND found.size <= $3
          RETURNING artifacts.filename, artifacts.mime, artifacts.bytes)
     SELECT found.size, taken.filename, taken.mime, taken.bytes
       FROM found LEFT JOIN taken ON true";

/// The artifact store in the shared database, under [`ArtifactLimits`].
pub struct PostgresArtifacts {
    database: Arc<Postgres>,
    limits: ArtifactLimits,
}

impl PostgresArtifacts {
    /// Artifacts in `database`, under `limits`.
    pub fn new(database: Arc<Postgres>, limits: ArtifactLimits) -> Self {
        Self { database, limits }
    }

    async fn put_now(
        &self,
        conversation: &str,
        artifact: Artifact,
        ttl: Option<Duration>,
    ) -> Result<ArtifactHandle, ArtifactError> {
        check(&self.limits, &artifact)?;
        let size = footprint(conversation, &artifact) as i64;
        let ttl = ttl.map_or(self.limits.ttl(), |ttl| ttl.min(self.limits.ttl()));
        let capacity = i64::try_from(self.limits.capacity_bytes).unwrap_or(i64::MAX);
        let handle = new_handle();
        let database = &self.database;
        let kept = database
            .bounded(async {
                let connection = database.connection().await?;
                let put = connection.prepare_cached(PUT).await?;
                let kept = connection
                    .execute(
                        &put,
                        &[
                            &handle,
                            &conversation,
                            &artifact.filename,
                            &artifact.mime,
                            &artifact.bytes,
                            &size,
                            &ttl.as_secs_f64(),
                            &capacity,
                        ],
                    )
                    .await?;
                Ok(kept == 1)
            })
            .await
            .map_err(unavailable)?;
        if !kept {
            return Err(ArtifactError::StoreFull);
        }
        Ok(ArtifactHandle::new(handle))
    }

    async fn take_now(
        &self,
        conversation: &str,
        handle: &ArtifactHandle,
    ) -> Result<Option<Artifact>, ArtifactError> {
        let database = &self.database;
        database
            .bounded(async {
                // Another conversation's handle is left in place, and answers as an
                // unknown one does.
                let connection = database.connection().await?;
                let take = connection.prepare_cached(TAKE).await?;
                let row = connection
                    .query_opt(&take, &[&handle.as_str(), &conversation])
                    .await?;
                Ok(row.map(|row| Artifact {
                    filename: row.get(0),
                    mime: row.get(1),
                    bytes: row.get(2),
                }))
            })
            .await
            .map_err(unavailable)
    }
}

impl PostgresArtifacts {
    async fn take_within_now(
        &self,
        conversation: &str,
        handle: &ArtifactHandle,
        max_bytes: usize,
    ) -> Result<Option<Artifact>, ArtifactError> {
        let database = &self.database;
        let limit = i64::try_from(max_bytes).unwrap_or(i64::MAX);
        let row = database
            .bounded(async {
                let connection = database.connection().await?;
                let take = connection.prepare_cached(TAKE_WITHIN).await?;
                Ok(connection
                    .query_opt(&take, &[&handle.as_str(), &conversation, &limit])
                    .await?)
            })
            .await
            .map_err(unavailable)?;
        let Some(row) = row else { return Ok(None) };
        let filename: Option<String> = row.get(1);
        match filename {
            Some(filename) => Ok(Some(Artifact {
                filename,
                mime: row.get(2),
                bytes: row.get(3),
            })),
            None => Err(ArtifactError::TooLarge {
                size: usize::try_from(row.get::<_, i64>(0)).unwrap_or(usize::MAX),
                limit: max_bytes,
            }),
        }
    }
}

/// What a tool is told: the store's own words, never the database's statement.
fn unavailable(error: DatabaseError) -> ArtifactError {
    tracing::warn!(%error, "the artifact store failed");
    ArtifactError::Unavailable(
        match error {
            DatabaseError::TimedOut(_) => "the database did not answer in time",
            DatabaseError::Unavailable(_) => "the database could not be reached",
            DatabaseError::Failed(_) => "the database failed",
        }
        .into(),
    )
}

impl ArtifactStore for PostgresArtifacts {
    fn put<'a>(
        &'a self,
        conversation: &'a str,
        artifact: Artifact,
        ttl: Option<Duration>,
    ) -> BoxFuture<'a, Result<ArtifactHandle, ArtifactError>> {
        Box::pin(self.put_now(conversation, artifact, ttl))
    }

    fn take<'a>(
        &'a self,
        conversation: &'a str,
        handle: &'a ArtifactHandle,
    ) -> BoxFuture<'a, Result<Option<Artifact>, ArtifactError>> {
        Box::pin(self.take_now(conversation, handle))
    }

    fn take_within<'a>(
        &'a self,
        conversation: &'a str,
        handle: &'a ArtifactHandle,
        max_bytes: usize,
    ) -> BoxFuture<'a, Result<Option<Artifact>, ArtifactError>> {
        Box::pin(self.take_within_now(conversation, handle, max_bytes))
    }
}
