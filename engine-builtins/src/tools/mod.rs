//! The five tools, one module each, and what they share.

pub mod create_directory;
pub mod get_text_content;
pub mod list_files;
pub mod read_path_meta;
pub mod write_text_content;

#[cfg(test)]
mod beneath;

use cap_std::fs::{Dir, FileType};
use plugin_sdk::prelude::*;
use plugin_sdk::project::Project;

use crate::refusal::{Doing, OrRefuse};

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
