//! The seven tools, one module each, and what they share.

pub mod create_directory;
pub mod delete_path;
pub mod get_text_content;
pub mod list_files;
pub mod move_path;
pub mod read_path_meta;
pub mod write_text_content;

#[cfg(test)]
mod beneath;

use std::sync::atomic::{AtomicU64, Ordering};

use cap_std::fs::{Dir, FileType, OpenOptions};
use plugin_sdk::prelude::*;
use plugin_sdk::project::Project;

use crate::path::ProjectPath;
use crate::refusal::{refusal, Doing, OrRefuse};

/// The arguments of a tool that takes one path.
#[derive(Debug, Deserialize, JsonSchema, ToolArgs)]
pub struct PathArgs {
    /// Path relative to the project root, with `/` between names (`docs/intro/index.page`).
    pub path: String,
}

/// What a path names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A regular file.
    File,
    /// A directory.
    Directory,
    /// A symbolic link (listings do not follow them).
    Symlink,
    /// Anything else: a FIFO, a socket, a device. No tool reads one.
    Other,
}

impl Kind {
    /// The kind of a file type, not following a symlink.
    pub fn of(file_type: FileType) -> Self {
        if file_type.is_file() {
            Self::File
        } else if file_type.is_dir() {
            Self::Directory
        } else if file_type.is_symlink() {
            Self::Symlink
        } else {
            Self::Other
        }
    }
}

/// The project root as a capability: a directory handle that opens only beneath itself.
pub fn root_of(project: &Project) -> Result<Dir, ToolError> {
    let handle = project
        .root()
        .try_clone()
        .or_refuse(Doing::Inspecting, ".")?;
    Ok(Dir::from_std_file(handle))
}

/// The directory that holds `path`, opened beneath the root, and `path`'s last name.
/// Every step after this is relative to the directory's handle: a symlink swapped in for
/// a directory on the way cannot redirect it. A missing directory is refused with
/// `missing`'s sentence (given the path as shown), anything else as `doing` it.
pub(crate) fn parent_of<'p>(
    root: &Dir,
    path: &'p ProjectPath,
    doing: Doing,
    missing: fn(&str) -> String,
) -> Result<(Dir, &'p str), ToolError> {
    let shown = path.shown();
    let Some((parent, name)) = path.split_last() else {
        return Err(ToolError::new(
            "the path names the project root itself: give the path of a file or directory beneath it",
        ));
    };
    let dir = if parent.as_os_str().is_empty() {
        root.try_clone().or_refuse(doing, ".")?
    } else {
        root.open_dir(&parent).map_err(|error| {
            if error.kind() == std::io::ErrorKind::NotFound {
                ToolError::new(missing(&shown))
            } else {
                refusal(&error, doing, &shown)
            }
        })?
    };
    Ok((dir, name))
}

/// Makes the names `dir` holds durable (a rename, a removal), as far as a sync can: its
/// handle is opened for reading, since cap-std's directory handles are `O_PATH`, which
/// cannot be synced. A failure is ignored: the change itself has happened.
pub(crate) fn sync_names(dir: &Dir) {
    if let Ok(listing) = dir.open_with(".", OpenOptions::new().read(true)) {
        let _ = listing.sync_all();
    }
}

/// A name no other change uses, hidden and of fixed length whatever the path's:
/// `.{purpose}-{pid}-{nanos}-{n}.tmp`.
pub(crate) fn temporary_name(purpose: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    // The clock's nanoseconds tell apart two engines with one pid sharing the directory.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.subsec_nanos());
    format!(
        ".{purpose}-{}-{nanos}-{}.tmp",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}
