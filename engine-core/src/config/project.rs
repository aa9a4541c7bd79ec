//! An agent's project: the directory its file tools work in, and their limits.

use std::path::PathBuf;

use plugin_sdk::project::ProjectLimits;
use serde::Deserialize;

/// The largest file the built-in file tools read or write, in bytes (64 MiB): a file is
/// read whole, and its text goes to the model.
pub const MAX_PROJECT_FILE_BYTES: u64 = 64 << 20;

/// The most entries one listing may return.
pub const MAX_LIST_ENTRIES: usize = 100_000;

/// The directory an agent's file tools work in, and what they may do there.
///
/// ```toml
/// [agents.site.project]
/// root = "site"               # created if missing; relative to the working directory;
///                             # never holding what the engine reads (data_dir, the
///                             # extensions and providers directories, the
///                             # configuration file, the engine's executable) nor
///                             # within data_dir or those directories, nor within
///                             # another agent's root (sharing one is fine)
/// max_file_bytes = 1048576    # default 1 MiB
/// max_list_entries = 1000     # default 1000
/// quota_bytes = 67108864      # absent: no quota
/// ```
#[derive(Clone, Debug, Deserialize)]
pub struct ProjectConfig {
    /// The root: no file tool reaches anything outside it.
    pub root: PathBuf,
    /// The largest file read or written, in bytes.
    #[serde(default = "default_max_file_bytes")]
    pub max_file_bytes: u64,
    /// The most entries one listing returns; a listing cut there says so.
    #[serde(default = "default_max_list_entries")]
    pub max_list_entries: usize,
    /// The most bytes the root's files may hold together; a write past it is refused.
    #[serde(default)]
    pub quota_bytes: Option<u64>,
}

impl ProjectConfig {
    /// A project at `root` with the default limits.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            max_file_bytes: default_max_file_bytes(),
            max_list_entries: default_max_list_entries(),
            quota_bytes: None,
        }
    }

    /// The limits the tools get.
    pub fn limits(&self) -> ProjectLimits {
        ProjectLimits {
            max_file_bytes: self.max_file_bytes,
            max_list_entries: self.max_list_entries,
            quota_bytes: self.quota_bytes,
        }
    }
}

fn default_max_file_bytes() -> u64 {
    1 << 20
}

fn default_max_list_entries() -> usize {
    1000
}
