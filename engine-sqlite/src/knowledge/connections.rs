//! The store's SQLite connections, used off the async workers.
//!
//! A call waits for a free connection asynchronously (so its deadline or cancellation
//! still cuts the wait), then its work runs on Tokio's blocking pool. If the call stops
//! waiting before the work is done (the future is dropped), SQLite's progress handler
//! interrupts the work, and [`busy`] stops a wait for a database another connection
//! locked, so a connection and a blocking thread are never held for longer than the
//! caller wanted. At most one blocking thread per connection is busy at a time.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::Connection;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::busy;

/// How many SQLite virtual-machine steps run between two looks at whether the caller
/// still waits: small enough to stop within a millisecond or so.
const STEPS_BETWEEN_CHECKS: i32 = 1_000;

/// Connections to one database file, each used by one call at a time.
pub(super) struct Connections {
    free: Mutex<Vec<Connection>>,
    available: Arc<Semaphore>,
    /// The longest a call waits for a database another connection locked.
    busy_timeout: Duration,
}

impl Connections {
    /// Opens `count` connections (at least one) to `path`, each [`configure`]d, each
    /// waiting at most `busy_timeout` for a database another connection locked.
    pub(super) fn open(
        path: &Path,
        count: usize,
        busy_timeout: Duration,
    ) -> rusqlite::Result<Self> {
        let count = count.max(1);
        let connections = (0..count)
            .map(|_| {
                let connection = Connection::open(path)?;
                configure(&connection, busy_timeout)?;
                connection.busy_handler(Some(busy::wait_while_wanted))?;
                Ok(connection)
            })
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(Self {
            free: Mutex::new(connections),
            available: Arc::new(Semaphore::new(count)),
            busy_timeout,
        })
    }

    /// Runs `work` on a free connection, on the blocking pool; interrupted if the
    /// returned future is dropped before it answers.
    pub(super) async fn run<T, W>(self: &Arc<Self>, work: W) -> rusqlite::Result<T>
    where
        T: Send + 'static,
        W: FnOnce(&mut Connection) -> rusqlite::Result<T> + Send + 'static,
    {
        let permit = Arc::clone(&self.available)
            .acquire_owned()
            .await
            .expect("the semaphore is never closed");
        let abandoned = Arc::new(AtomicBool::new(false));
        let _stop = StopOnDrop(Arc::clone(&abandoned));
        let lease = Lease {
            connection: Some(self.take_free()),
            connections: Arc::clone(self),
            _permit: permit,
        };
        let busy_timeout = self.busy_timeout;
        let task = tokio::task::spawn_blocking(move || {
            let mut lease = lease;
            // A caller gone before the work starts wants none of it.
            if abandoned.load(Ordering::Relaxed) {
                return Err(interrupted(
                    "the caller stopped waiting before the work started",
                ));
            }
            let connection = lease.connection.as_mut().expect("held until dropped");
            let _waiter = busy::waiting_for(Arc::clone(&abandoned), busy_timeout);
            // The handler belongs to this piece of work: a later one installs its own,
            // so a caller that gives up late cannot interrupt someone else's.
            connection.progress_handler(
                STEPS_BETWEEN_CHECKS,
                Some(move || abandoned.load(Ordering::Relaxed)),
            );
            work(connection)
        });
        match task.await {
            Ok(result) => result,
            Err(error) => match error.try_into_panic() {
                Ok(payload) => std::panic::resume_unwind(payload),
                Err(_) => Err(interrupted("the runtime shut down during the query")),
            },
        }
    }

    fn take_free(&self) -> Connection {
        self.free
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .pop()
            .expect("a permit stands for a free connection")
    }
}

/// The error of work stopped (or never started) for `why`.
fn interrupted(why: &str) -> rusqlite::Error {
    rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_INTERRUPT),
        Some(why.to_owned()),
    )
}

/// Tells the work its caller is gone, when the caller's future is dropped (at the
/// deadline, on cancellation) or completes (when it no longer matters).
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// A connection in use: back to the free list when the work ends, however it ends,
/// ready for the next call; then the permit is released.
struct Lease {
    connection: Option<Connection>,
    connections: Arc<Connections>,
    _permit: OwnedSemaphorePermit,
}

impl Drop for Lease {
    fn drop(&mut self) {
        let Some(connection) = self.connection.take() else {
            return;
        };
        connection.progress_handler(0, None::<fn() -> bool>);
        // Interrupted work may leave a transaction open; the next call starts clean.
        if !connection.is_autocommit() {
            let _ = connection.execute_batch("ROLLBACK");
        }
        self.connections
            .free
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(connection);
    }
}

/// Every connection's settings: write-ahead logging with full syncing (a committed
/// write survives a power cut), and a bounded wait on a database another process locked
/// (SQLite's own, which [`Connections::open`] replaces by one that stops with the call).
pub(crate) fn configure(connection: &Connection, busy_timeout: Duration) -> rusqlite::Result<()> {
    // rusqlite panics on a timeout above `i32::MAX` milliseconds (24 days): cap it.
    connection.busy_timeout(busy_timeout.min(Duration::from_millis(i32::MAX as u64)))?;
    let mode: String = connection.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        tracing::warn!(mode, "an engine database could not use write-ahead logging");
    }
    connection.pragma_update(None, "synchronous", "FULL")?;
    Ok(())
}
