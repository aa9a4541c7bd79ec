//! File work off the async workers, stopped when its call is.
//!
//! A call's deadline and its cancellation drop the tool's future. The blocking job cannot
//! be interrupted inside a system call, so it checks [`Job::cancelled`] between steps
//! (a listing's entries, a quota walk's files) and makes its one visible change through
//! [`Job::commit`], which never runs once the call is gone: a write the model was told was
//! cancelled does not land afterwards.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use plugin_sdk::ToolError;

/// What a blocking job sees of its call.
#[derive(Default)]
pub struct Job {
    cancelled: AtomicBool,
    /// Held while the job commits and while the call is marked gone, so that the two
    /// never overlap.
    committing: Mutex<()>,
}

impl Job {
    /// Whether the call is gone (its deadline passed, or it was cancelled).
    pub fn cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Acquire)
    }

    /// Refuses to go on once the call is gone.
    pub fn go_on(&self) -> Result<(), ToolError> {
        if self.cancelled() {
            Err(ToolError::new("the call was cancelled"))
        } else {
            Ok(())
        }
    }

    /// Runs `change` unless the call is gone, as one step with respect to cancellation.
    pub fn commit<T>(&self, change: impl FnOnce() -> Result<T, ToolError>) -> Result<T, ToolError> {
        let _held = self.lock();
        self.go_on()?;
        change()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ()> {
        self.committing
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Marks the job's call gone when the call's future is dropped before the job answered.
struct CallGone(Arc<Job>);

impl Drop for CallGone {
    fn drop(&mut self) {
        let _held = self.0.lock();
        self.0.cancelled.store(true, Ordering::Release);
    }
}

/// Runs `work` on Tokio's blocking pool and waits for it; dropping the returned future
/// marks the job cancelled.
pub async fn off_the_workers<T: Send + 'static>(
    work: impl FnOnce(&Job) -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    let job = Arc::new(Job::default());
    // Dropped with this future: early when the call is gone, harmlessly once answered.
    let _gone = CallGone(Arc::clone(&job));
    tokio::task::spawn_blocking(move || work(&job))
        .await
        .map_err(|_| ToolError::new("the file work failed unexpectedly (a fault of the built-in tools, not of the call)"))?
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_job_whose_call_is_gone_commits_nothing() {
        let (started, job_started) = mpsc::channel();
        let (go_on, job_goes_on) = mpsc::channel::<()>();
        let (committed, job_committed) = mpsc::channel();
        let changed = Arc::new(AtomicBool::new(false));
        let change = Arc::clone(&changed);
        let call = tokio::spawn(off_the_workers(move |job| {
            started.send(()).unwrap();
            job_goes_on.recv().unwrap();
            committed
                .send(job.commit(|| {
                    change.store(true, Ordering::SeqCst);
                    Ok(())
                }))
                .unwrap();
            Ok(())
        }));
        job_started.recv().unwrap();
        // The call's deadline or cancellation drops its future while the job runs.
        call.abort();
        assert!(call.await.unwrap_err().is_cancelled());
        go_on.send(()).unwrap();
        let refused = job_committed.recv().unwrap().unwrap_err();
        assert_eq!(refused.message(), "the call was cancelled");
        assert!(!changed.load(Ordering::SeqCst), "the change ran");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_job_whose_call_waits_commits() {
        let answer = off_the_workers(|job| job.commit(|| Ok(7))).await;
        assert_eq!(answer.unwrap(), 7);
    }
}
