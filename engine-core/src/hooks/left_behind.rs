//! The threads of a plain-`fn` hook that its turns stopped waiting for.
//!
//! A plain `fn` hook runs on Tokio's blocking pool. At its timeout (or when its turn is
//! dropped) the turn goes on, but the thread cannot be stopped: it runs until the
//! function returns. If every turn started the hook again, a hook stuck for good would
//! take one more blocking thread per turn, until the pool is exhausted and every blocking
//! task of the process waits. So a hook with a thread left behind is not started again
//! until that thread returns: the run is skipped and counted, and it counts as the hook's
//! failure. A hook's threads left behind are at most the runs that were under way at
//! once when the first was left behind.

use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;

/// One hook's threads left behind, and the runs skipped because of them.
#[derive(Debug, Default)]
pub(super) struct LeftBehind {
    threads: AtomicUsize,
    skipped: AtomicU64,
}

/// A run's state, shared by the turn waiting for it and the thread running it.
struct Run {
    state: AtomicU8,
    hook: Arc<LeftBehind>,
}

const RUNNING: u8 = 0;
const RETURNED: u8 = 1;
const ABANDONED: u8 = 2;

impl LeftBehind {
    /// A run of the hook, as the turn's side and the thread's side; or, when a thread of
    /// the hook is still left behind, the number of runs skipped so far, this one
    /// included.
    pub(super) fn start(self: &Arc<Self>) -> Result<(Waiting, Running), u64> {
        if self.threads() > 0 {
            return Err(self.skipped.fetch_add(1, Ordering::Relaxed) + 1);
        }
        let run = Arc::new(Run {
            state: AtomicU8::new(RUNNING),
            hook: Arc::clone(self),
        });
        Ok((Waiting(Arc::clone(&run)), Running(run)))
    }

    /// The hook's threads that its turns stopped waiting for and that still run.
    pub(super) fn threads(&self) -> usize {
        self.threads.load(Ordering::Acquire)
    }

    /// The runs not started because a thread was left behind.
    pub(super) fn skipped(&self) -> u64 {
        self.skipped.load(Ordering::Relaxed)
    }
}

/// The turn's side of a run: dropped before the thread returned, it leaves the thread
/// behind.
pub(super) struct Waiting(Arc<Run>);

impl Drop for Waiting {
    fn drop(&mut self) {
        let Run { state, hook } = &*self.0;
        if state.load(Ordering::Acquire) == RETURNED {
            return;
        }
        // Counted before the state says so, so that the thread, once it sees
        // `ABANDONED`, always has a count to take back.
        hook.threads.fetch_add(1, Ordering::AcqRel);
        if state
            .compare_exchange(RUNNING, ABANDONED, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            // It returned meanwhile.
            hook.threads.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// The thread's side of a run: dropped when the hook's function returns or panics.
pub(super) struct Running(Arc<Run>);

impl Drop for Running {
    fn drop(&mut self) {
        let Run { state, hook } = &*self.0;
        if state.swap(RETURNED, Ordering::AcqRel) == ABANDONED {
            hook.threads.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_left_behind_blocks_new_runs_until_its_thread_returns() {
        let hook = Arc::new(LeftBehind::default());
        let (waiting, running) = hook.start().unwrap();
        drop(waiting);
        assert_eq!(hook.threads(), 1);
        assert_eq!(hook.start().err(), Some(1));
        assert_eq!(hook.start().err(), Some(2));
        drop(running);
        assert_eq!(hook.threads(), 0);
        assert_eq!(hook.skipped(), 2);

        // A run that returns before its turn stops waiting leaves nothing behind.
        let (waiting, running) = hook.start().unwrap();
        drop(running);
        drop(waiting);
        assert_eq!(hook.threads(), 0);
        assert!(hook.start().is_ok());
    }
}
