//! Start-up work spread over every core: each tool's schemas, checks and renderings are
//! independent of the others', and a schema costs microseconds, enough to pay for a
//! thread per core.

use std::num::NonZeroUsize;
use std::thread;

/// Below this many items a thread costs more than it saves.
const SEQUENTIAL_BELOW: usize = 64;

/// `items` mapped by `f`, in order, on as many threads as there are cores.
pub(crate) fn map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let cores = thread::available_parallelism().map_or(1, NonZeroUsize::get);
    if cores < 2 || items.len() < SEQUENTIAL_BELOW {
        return items.iter().map(f).collect();
    }
    let f = &f;
    let mut parts = items.chunks(items.len().div_ceil(cores));
    // The first part runs on this thread, which would otherwise only wait: one thread
    // (and its allocator arena) fewer to start.
    let first = parts.next().unwrap_or_default();
    thread::scope(|scope| {
        let others: Vec<_> = parts
            .map(|part| scope.spawn(move || part.iter().map(f).collect::<Vec<R>>()))
            .collect();
        let mut all: Vec<R> = Vec::with_capacity(items.len());
        all.extend(first.iter().map(f));
        all.extend(others.into_iter().flat_map(finish));
        all
    })
}

/// A scoped thread's result; its panic, if it panicked, goes on in this thread.
fn finish<R>(handle: thread::ScopedJoinHandle<'_, R>) -> R {
    handle
        .join()
        .unwrap_or_else(|payload| std::panic::resume_unwind(payload))
}
