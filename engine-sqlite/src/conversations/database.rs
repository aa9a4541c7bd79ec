//! The SQLite database behind the store: one connection, used on blocking threads, and
//! what an earlier process left running, settled on first use.

use std::sync::{Arc, Mutex};

use engine_core::stores::{ConversationError, INTERRUPTED};

use crate::holder::Holder;

/// The SQLite database, and whether this process has settled what an earlier one left
/// running.
pub(super) struct Database {
    pub(super) connection: Mutex<rusqlite::Connection>,
    /// Set once the actions an earlier process left `performing` are marked `unknown`:
    /// on this process's first use of the store, not when it opens it, so that `engine
    /// tools` or `check` beside a running `serve` leave its performs alone.
    pub(super) settled: std::sync::atomic::AtomicBool,
    /// This opening of the store, which other processes' turns see.
    pub(super) holder: Holder,
}

pub(super) fn sql(error: rusqlite::Error) -> ConversationError {
    ConversationError(format!("the conversation database failed: {error}"))
}

/// A process that died while an action ran left it `performing`: it may or may not have
/// taken effect, and it is never run again. An action of a conversation a live process's
/// turn holds is under way there, and left alone.
fn settle_interrupted(
    connection: &mut rusqlite::Connection,
    holder: &Holder,
) -> Result<(), ConversationError> {
    // One write transaction: no process begins a turn (nor records a perform) between
    // the reading of who holds what and the marking.
    let transaction = connection
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(sql)?;
    let held = holder.held_elsewhere(&transaction).map_err(sql)?;
    let held = serde_json::to_string(&held).expect("strings serialize");
    let interrupted = transaction
        .execute(
            "UPDATE actions SET state = 'unknown', detail = ?1
             WHERE state = 'performing'
               AND conversation NOT IN (SELECT value FROM json_each(?2))",
            [INTERRUPTED, &held],
        )
        .map_err(sql)?;
    transaction.commit().map_err(sql)?;
    if interrupted > 0 {
        tracing::warn!(
            actions = interrupted,
            "staged actions were running when the engine stopped: marked unknown, not run again"
        );
    }
    Ok(())
}

/// Runs `work` on the connection on a blocking thread: SQLite's calls block. The first
/// use settles what an earlier process left running.
pub(super) async fn blocking<T: Send + 'static>(
    database: &Arc<Database>,
    work: impl FnOnce(&mut rusqlite::Connection) -> Result<T, ConversationError> + Send + 'static,
) -> Result<T, ConversationError> {
    use std::sync::atomic::Ordering;
    let database = Arc::clone(database);
    tokio::task::spawn_blocking(move || {
        let mut connection = database
            .connection
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        // Best effort: a failure is logged, and never fails the work at hand.
        if !database.settled.swap(true, Ordering::AcqRel) {
            if let Err(error) = settle_interrupted(&mut connection, &database.holder) {
                tracing::error!(%error, "actions an earlier run left performing could not be marked unknown");
            }
        }
        work(&mut connection)
    })
    .await
    .map_err(|error| {
        ConversationError(format!("the conversation store's thread failed: {error}"))
    })?
}
