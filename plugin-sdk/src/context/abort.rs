//! The call's abort signal: "nobody waits for this any more", for work a tool or hook
//! does outside its own future (a thread, a spawned task) or in a body without `.await`.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

/// Whether the engine still waits for a call: take it as `abort: &Abort`.
///
/// It is aborted once the call's deadline passes, once the turn is cancelled (the user
/// left, the turn was stopped), and once the engine stops waiting for the call for any
/// other reason, its result in hand included. An `async` body that awaits needs none of
/// this: the engine drops its future at the deadline. It is for what the future does not
/// cover:
///
/// - a body without `.await`, which runs to its end once started: check
///   [`is_aborted`](Abort::is_aborted) between steps of long work (it reads the clock
///   against the deadline, so it needs no timer);
/// - work handed to a thread or a task: give it a clone, and stop when it says so, or
///   await [`aborted`](Abort::aborted) beside the work.
#[derive(Clone, Default)]
pub struct Abort {
    /// `None`: never aborted (a call outside an engine).
    inner: Option<Arc<Inner>>,
}

struct Inner {
    deadline: Option<Instant>,
    /// Set once, when the engine stops waiting.
    fired: AtomicBool,
    /// Whether the turn was cancelled, asked of the engine's own token: a body without
    /// `.await` sees a cancellation that came while it ran.
    cancelled: Option<Box<dyn Fn() -> bool + Send + Sync>>,
    /// The tasks waiting in [`Abort::aborted`].
    waiting: Mutex<Vec<Waker>>,
}

impl Abort {
    /// The signal of a call outside any engine: never aborted.
    pub(crate) const NEVER: Abort = Abort { inner: None };

    /// The signal of one call that must end by `deadline` (if any) and is cancelled when
    /// `cancelled` says so; for engines, which [`fire`](Self::fire) it when they stop
    /// waiting.
    pub fn new(
        deadline: Option<Instant>,
        cancelled: Option<Box<dyn Fn() -> bool + Send + Sync>>,
    ) -> Self {
        Self {
            inner: Some(Arc::new(Inner {
                deadline,
                fired: AtomicBool::new(false),
                cancelled,
                waiting: Mutex::new(Vec::new()),
            })),
        }
    }

    /// Whether the engine no longer waits for the call: it stopped waiting, the turn
    /// was cancelled, or the deadline passed.
    pub fn is_aborted(&self) -> bool {
        let Some(inner) = &self.inner else {
            return false;
        };
        inner.fired.load(Ordering::Acquire)
            || inner
                .cancelled
                .as_ref()
                .is_some_and(|cancelled| cancelled())
            || inner.deadline.is_some_and(|at| Instant::now() >= at)
    }

    /// When the engine stops waiting at the latest, if it set a deadline.
    pub fn deadline(&self) -> Option<Instant> {
        self.inner.as_ref()?.deadline
    }

    /// The time left before the deadline (zero once past), if there is one.
    pub fn remaining(&self) -> Option<Duration> {
        self.deadline()
            .map(|at| at.saturating_duration_since(Instant::now()))
    }

    /// Resolves once the engine stops waiting for the call (it never does outside an
    /// engine). The engine stops waiting at the latest at the deadline.
    pub fn aborted(&self) -> Aborted {
        Aborted {
            abort: self.clone(),
        }
    }

    /// Marks the call aborted and wakes whatever awaits [`aborted`](Self::aborted); for
    /// engines, when they stop waiting for the call.
    pub fn fire(&self) {
        let Some(inner) = &self.inner else { return };
        if inner.fired.swap(true, Ordering::AcqRel) {
            return;
        }
        let waiting = std::mem::take(&mut *lock(&inner.waiting));
        waiting.into_iter().for_each(Waker::wake);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A waker list is whole even if a holder panicked.
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The future of [`Abort::aborted`].
#[must_use = "a future does nothing unless awaited"]
pub struct Aborted {
    abort: Abort,
}

impl Future for Aborted {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let Some(inner) = &self.abort.inner else {
            return Poll::Pending;
        };
        if inner.fired.load(Ordering::Acquire) {
            return Poll::Ready(());
        }
        let mut waiting = lock(&inner.waiting);
        // Checked again under the lock: `fire` takes the list under it after setting the
        // flag, so a waker pushed now is either woken or sees the flag.
        if inner.fired.load(Ordering::Acquire) {
            return Poll::Ready(());
        }
        if !waiting.iter().any(|waker| waker.will_wake(cx.waker())) {
            waiting.push(cx.waker().clone());
        }
        Poll::Pending
    }
}

impl fmt::Debug for Abort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Abort")
            .field("deadline", &self.deadline())
            .field("aborted", &self.is_aborted())
            .finish()
    }
}

/// Fires the call's signal when dropped: the engine holds it for as long as it waits.
#[derive(Debug, Default)]
pub(crate) struct FireOnDrop(pub(crate) Abort);

impl Drop for FireOnDrop {
    fn drop(&mut self) {
        self.0.fire();
    }
}
