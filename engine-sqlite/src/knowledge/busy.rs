//! Waiting for a database another connection locked, for as long as the caller waits.
//!
//! SQLite's own busy timeout sleeps without looking at anything, and the progress
//! handler does not run while it sleeps: a call abandoned at its deadline would keep its
//! blocking thread and its connection for the whole timeout. This handler sleeps in
//! short steps and gives up as soon as the caller is gone, or when the timeout passed.
//! SQLite takes a plain function for it, so the call it waits for is found in a
//! thread-local, set by the worker for the time its work runs.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The longest sleep between two attempts at the lock: how late an abandoned wait ends.
const STEP: Duration = Duration::from_millis(5);

/// The call whose work runs on this thread, for the busy handler.
struct Waiter {
    abandoned: Arc<AtomicBool>,
    busy_timeout: Duration,
    /// When the current wait for a lock began.
    since: Instant,
}

thread_local! {
    static WAITER: RefCell<Option<Waiter>> = const { RefCell::new(None) };
}

/// The work of a call whose caller gives up by setting `abandoned` runs on this thread
/// until the guard is dropped: a lock held elsewhere is waited for at most
/// `busy_timeout`, and only while the caller waits.
pub(super) fn waiting_for(abandoned: Arc<AtomicBool>, busy_timeout: Duration) -> WaiterGuard {
    WAITER.with_borrow_mut(|waiter| {
        *waiter = Some(Waiter {
            abandoned,
            busy_timeout,
            since: Instant::now(),
        });
    });
    WaiterGuard(())
}

/// Ends [`waiting_for`]: outside a call's work, a locked database is not waited for.
pub(super) struct WaiterGuard(());

impl Drop for WaiterGuard {
    fn drop(&mut self) {
        WAITER.with_borrow_mut(|waiter| *waiter = None);
    }
}

/// SQLite's busy handler: `attempts` is how often it ran for this lock before. Whether
/// to try the lock again, after a short sleep.
pub(super) fn wait_while_wanted(attempts: i32) -> bool {
    let sleep = WAITER.with_borrow_mut(|waiter| {
        let waiter = waiter.as_mut()?;
        if waiter.abandoned.load(Ordering::Relaxed) {
            return None;
        }
        let now = Instant::now();
        if attempts == 0 {
            waiter.since = now;
        }
        let left = waiter.busy_timeout.checked_sub(now - waiter.since)?;
        (!left.is_zero()).then(|| left.min(STEP))
    });
    sleep.map(std::thread::sleep).is_some()
}
