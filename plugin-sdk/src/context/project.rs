//! The agent's project: a directory the agent's configuration names, handed to tools as
//! an open handle and never as a path.

use std::fmt;
use std::fs::File;
use std::sync::Arc;

/// The agent's project root, for a tool that works on its files (the engine's built-in
/// file tools take it): an open handle to the directory and the limits of work in it.
///
/// The handle is all a tool gets: it never learns where the directory is on the host, so
/// no message of the tool can tell the model. Open files beneath it with a crate made for
/// confined access (the built-ins use `cap-std`, which resolves every path beneath the
/// handle and refuses one that leads out, `..` and symlinks included).
///
/// A tool that takes `&Project` is equipped only by agents with a project root; `tools`
/// and `check` say so of the others.
#[derive(Clone)]
pub struct Project {
    inner: Arc<Shared>,
}

struct Shared {
    root: File,
    limits: ProjectLimits,
}

/// What file work in a project may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProjectLimits {
    /// The largest file read or written, in bytes.
    pub max_file_bytes: u64,
    /// The most entries one listing returns.
    pub max_list_entries: usize,
    /// The most bytes the project's files may hold together; `None`: no quota.
    pub quota_bytes: Option<u64>,
}

impl Project {
    /// The project whose root is the directory `root` (an engine opens it from the
    /// configuration; a test, from a scratch directory).
    pub fn new(root: File, limits: ProjectLimits) -> Self {
        Self {
            inner: Arc::new(Shared { root, limits }),
        }
    }

    /// The root directory, open.
    pub fn root(&self) -> &File {
        &self.inner.root
    }

    /// The limits of work in it.
    pub fn limits(&self) -> &ProjectLimits {
        &self.inner.limits
    }
}

impl fmt::Debug for Project {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // No path: there is none to show, and the handle's number says nothing.
        f.debug_struct("Project")
            .field("limits", &self.inner.limits)
            .finish_non_exhaustive()
    }
}
