//! Changes to a project's tree, one at a time per root: a quota is checked and kept as
//! one step.
//!
//! Within the process, one Tokio mutex per root directory (by device and inode, so two
//! agents configured with one root, or with two spellings of it, share it), waited on in
//! the call's future: a call past its deadline stops waiting and holds no thread. Across
//! processes (two engines on one root), an advisory `flock` on the root, polled from the
//! job so that it too stops when the call is gone.

use std::collections::HashMap;
use std::os::fd::AsRawFd;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cap_std::fs::{Dir, MetadataExt};
use plugin_sdk::ToolError;
use tokio::sync::OwnedMutexGuard;

use crate::refusal::{Doing, OrRefuse};
use crate::work::Job;

/// Held by a change in this process.
pub type InProcess = OwnedMutexGuard<()>;

/// Waits for the root's turn in this process.
pub async fn in_process(root: &Dir) -> Result<InProcess, ToolError> {
    /// One mutex per root directory, by device and inode.
    type Roots = HashMap<(u64, u64), Arc<tokio::sync::Mutex<()>>>;
    static ROOTS: Mutex<Option<Roots>> = Mutex::new(None);
    let meta = root.dir_metadata().or_refuse(Doing::Inspecting, ".")?;
    let mutex = {
        let mut roots = ROOTS
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        Arc::clone(
            roots
                .get_or_insert_with(HashMap::new)
                .entry((meta.dev(), meta.ino()))
                .or_default(),
        )
    };
    Ok(mutex.lock_owned().await)
}

/// The root locked against other processes until dropped.
pub struct AcrossProcesses<'d> {
    root: &'d Dir,
}

impl<'d> AcrossProcesses<'d> {
    /// Takes the lock for a change `doing` something, under the root's lock in this
    /// process (`_in_process` says it is held: calls in one process share the root's
    /// open file description, and only that lock keeps them from unlocking each other's
    /// `flock`), polling while another process holds it and the call waits.
    pub fn take(
        root: &'d Dir,
        _in_process: &InProcess,
        doing: Doing,
        job: &Job,
    ) -> Result<Self, ToolError> {
        loop {
            // SAFETY: `flock` on a descriptor `root` owns for this whole call.
            if unsafe { libc::flock(root.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                return Ok(Self { root });
            }
            let error = std::io::Error::last_os_error();
            if error.raw_os_error() != Some(libc::EWOULDBLOCK) {
                return Err(crate::refusal::refusal(&error, doing, "."));
            }
            job.go_on()?;
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

impl Drop for AcrossProcesses<'_> {
    fn drop(&mut self) {
        // SAFETY: as in `take`. (Every handle of the root shares one open file
        // description, so the lock is released here, not when this handle closes.)
        unsafe { libc::flock(self.root.as_raw_fd(), libc::LOCK_UN) };
    }
}
