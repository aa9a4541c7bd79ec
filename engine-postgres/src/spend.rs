//! Agents' spend windows on PostgreSQL: every replica's model calls in one ledger, so a
//! window's cap holds across them. A reservation and its check are one transaction under
//! the agent's advisory lock; rows older than the window are never read again, and are
//! deleted as the agent spends.

use plugin_sdk::engine::BoxFuture;

use super::Postgres;
use engine_core::config::MAX_SPEND_WINDOW_SECS;
use engine_core::model::{SharedWindow, SpendLedger, WindowReservation};
use engine_core::BackendError;

/// How long a charge is kept: the longest window a configuration may give.
const KEPT_SECS: f64 = MAX_SPEND_WINDOW_SECS as f64;

impl SpendLedger for Postgres {
    fn reserve<'a>(
        &'a self,
        window: &'a SharedWindow,
        usd: f64,
    ) -> BoxFuture<'a, Result<WindowReservation, BackendError>> {
        Box::pin(async move {
            let secs = window.secs as f64;
            self.bounded(async {
                let mut connection = self.connection().await?;
                let transaction = connection.transaction().await?;
                transaction
                    .execute(
                        "SELECT pg_advisory_xact_lock(hashtextextended('spend:' || $1, 0))",
                        &[&window.agent],
                    )
                    .await?;
                // What no window will read again: kept a day past the longest window
                // any configuration may give, not this one's, since a replica not yet
                // reloaded (or a turn still on the old grant) may count a shorter one.
                transaction
                    .execute(
                        "DELETE FROM spend WHERE agent = $1
                           AND at < now() - make_interval(secs => $2) - interval '1 day'",
                        &[&window.agent, &KEPT_SECS],
                    )
                    .await?;
                let spent: f64 = transaction
                    .query_one(
                        "SELECT COALESCE(SUM(usd), 0) FROM spend
                         WHERE agent = $1 AND at > now() - make_interval(secs => $2)",
                        &[&window.agent, &secs],
                    )
                    .await?
                    .get(0);
                // A NaN anywhere is no room, as in the local meter.
                if !matches!(
                    (spent + usd).partial_cmp(&window.cap_usd),
                    Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal)
                ) {
                    return Ok(WindowReservation::Refused { spent_usd: spent });
                }
                let id: i64 = transaction
                    .query_one(
                        "INSERT INTO spend (agent, usd) VALUES ($1, $2) RETURNING id",
                        &[&window.agent, &usd],
                    )
                    .await?
                    .get(0);
                transaction.commit().await?;
                Ok(WindowReservation::Reserved { id })
            })
            .await
            .map_err(BackendError::new)
        })
    }

    fn settle(&self, id: i64, usd: f64) -> BoxFuture<'_, Result<(), BackendError>> {
        Box::pin(async move {
            self.bounded(async {
                self.connection()
                    .await?
                    .execute(
                        "UPDATE spend SET usd = $2, settled = true WHERE id = $1",
                        &[&id, &usd],
                    )
                    .await?;
                Ok(())
            })
            .await
            .map_err(BackendError::new)
        })
    }
}
