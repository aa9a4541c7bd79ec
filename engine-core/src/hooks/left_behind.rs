//! How many runs of a plain-`fn` hook may be under way at once, and the threads its
//! turns stopped waiting for.
//!
//! A plain `fn` hook runs on Tokio's blocking pool. At its timeout (or when its turn is
//! dropped) the turn goes on, but the thread cannot be stopped: it runs until the
//! function returns. Were every turn to start the hook, a hook stuck for good would take
//! one more blocking thread per turn, and so would a slow hook under many concurrent
//! turns within its first timeout, until the pool is exhausted and every blocking task
//! of the process waits. So a hook has [`RUNS_AT_ONCE`] permits: a run holds one until
//! its thread returns, and a turn that finds none free waits for one within the hook's
//! timeout. A turn skips the hook when a thread of it is left behind (a hook stuck for
//! good is not waited for again by every turn), or when no permit came free within the
//! timeout; the skip is counted, logged, and counts as the hook's failure. A hook holds
//! at most [`RUNS_AT_ONCE`] blocking threads.

use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The runs of one plain-`fn` hook under way at once, at most: enough that a fast hook
/// is not a queue for concurrent turns, few enough that a stuck one holds few threads.
pub(super) const RUNS_AT_ONCE: usize = 4;

/// One hook's permits, its threads left behind, and the runs skipped.
#[derive(Debug)]
pub(super) struct LeftBehind {
    permits: Arc<Semaphore>,
    /// Runs whose turns stopped waiting for them before they returned.
    abandoned: AtomicUsize,
    /// Of those, the ones whose threads have returned since.
    returned: AtomicUsize,
    skipped: AtomicU64,
}

impl Default for LeftBehind {
    fn default() -> Self {
        Self {
            permits: Arc::new(Semaphore::new(RUNS_AT_ONCE)),
            abandoned: AtomicUsize::new(0),
            returned: AtomicUsize::new(0),
            skipped: AtomicU64::new(0),
        }
    }
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
    /// A run of the hook, as the turn's side and the thread's side, once a permit is
    /// free (waiting at most `within`); or, when a thread of the hook is left behind or
    /// no permit came free, the number of runs skipped so far, this one included.
    pub(super) async fn start(
        self: &Arc<Self>,
        within: Duration,
    ) -> Result<(Waiting, Running), u64> {
        if self.threads() > 0 {
            return Err(self.skip());
        }
        let permit = Arc::clone(&self.permits).acquire_owned();
        let Ok(Ok(permit)) = tokio::time::timeout(within, permit).await else {
            return Err(self.skip());
        };
        let run = Arc::new(Run {
            state: AtomicU8::new(RUNNING),
            hook: Arc::clone(self),
        });
        Ok((
            Waiting(Arc::clone(&run)),
            Running {
                run,
                _permit: permit,
            },
        ))
    }

    fn skip(&self) -> u64 {
        self.skipped.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// The hook's threads that its turns stopped waiting for and that still run.
    pub(super) fn threads(&self) -> usize {
        // A thread counts as returned only after its run was counted as abandoned, so
        // reading the returned ones second never counts a thread that returned.
        let returned = self.returned.load(Ordering::Acquire);
        self.abandoned
            .load(Ordering::Acquire)
            .saturating_sub(returned)
    }

    /// The runs not started because a thread was left behind or no permit came free.
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
        // Claimed in one step: only a run still running is counted as left behind.
        if state
            .compare_exchange(RUNNING, ABANDONED, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            hook.abandoned.fetch_add(1, Ordering::AcqRel);
        }
    }
}

/// The thread's side of a run, with its permit: dropped when the hook's function
/// returns or panics.
pub(super) struct Running {
    run: Arc<Run>,
    /// Given back once the run is counted as returned.
    _permit: OwnedSemaphorePermit,
}

impl Drop for Running {
    fn drop(&mut self) {
        let Run { state, hook } = &*self.run;
        if state.swap(RETURNED, Ordering::AcqRel) == ABANDONED {
            hook.returned.fetch_add(1, Ordering::AcqRel);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: Duration = Duration::ZERO;

    #[tokio::test]
    async fn runs_take_permits_and_a_run_left_behind_blocks_new_runs_until_it_returns() {
        let hook = Arc::new(LeftBehind::default());
        let mut runs = Vec::new();
        for _ in 0..RUNS_AT_ONCE {
            runs.push(hook.start(NOW).await.unwrap());
        }
        // Every permit is taken: a turn that cannot wait skips the hook.
        assert_eq!(hook.start(NOW).await.err(), Some(1));
        assert_eq!(hook.threads(), 0);

        let (waiting, running) = runs.pop().unwrap();
        drop(waiting);
        assert_eq!(hook.threads(), 1);
        drop(runs);
        // A permit is free, but a thread is left behind.
        assert_eq!(hook.start(NOW).await.err(), Some(2));
        drop(running);
        assert_eq!(hook.threads(), 0);

        // A run that returns before its turn stops waiting leaves nothing behind.
        let (waiting, running) = hook.start(NOW).await.unwrap();
        drop(running);
        drop(waiting);
        assert_eq!(hook.threads(), 0);
        assert!(hook.start(NOW).await.is_ok());
        assert_eq!(hook.skipped(), 2);
    }
}
