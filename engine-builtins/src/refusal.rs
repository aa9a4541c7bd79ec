//! File system errors as sentences the model can act on, naming the path as the model
//! wrote it and nothing of the host: no absolute path, no system message.

use std::io;

use plugin_sdk::ToolError;

/// What a tool was doing when the file system refused.
#[derive(Clone, Copy, Debug)]
pub enum Doing {
    Reading,
    Writing,
    Listing,
    Creating,
    Inspecting,
    Moving,
    Deleting,
}

impl Doing {
    fn verb(self) -> &'static str {
        match self {
            Self::Reading => "read",
            Self::Writing => "written",
            Self::Listing => "listed",
            Self::Creating => "created",
            Self::Inspecting => "inspected",
            Self::Moving => "moved",
            Self::Deleting => "deleted",
        }
    }
}

/// `error`, met while `doing` something to `shown` (a path as [`ProjectPath::shown`]
/// gives it), as one sentence.
///
/// [`ProjectPath::shown`]: crate::path::ProjectPath::shown
pub fn refusal(error: &io::Error, doing: Doing, shown: &str) -> ToolError {
    use io::ErrorKind::*;
    match error.raw_os_error() {
        // What opening a socket (or a device without a driver) answers.
        Some(libc::ENXIO) => {
            return ToolError::new(format!("`{shown}` is a socket or a device, not a file"))
        }
        Some(libc::ELOOP) => {
            return ToolError::new(format!("`{shown}` goes through a loop of symbolic links"))
        }
        _ => {}
    }
    let message = match error.kind() {
        NotFound => format!("`{shown}` does not exist (or a directory on its way does not)"),
        // cap-std's answer to a path that leads outside the root, a symlink's included.
        PermissionDenied => format!("`{shown}` is outside the project root or not accessible"),
        NotADirectory => format!("a name on the way to `{shown}` is a file, not a directory"),
        IsADirectory => format!("`{shown}` is a directory"),
        AlreadyExists => format!("`{shown}` already exists and is not a directory"),
        InvalidFilename => format!("`{shown}` is too long for the file system"),
        StorageFull | QuotaExceeded => {
            format!("`{shown}` could not be {}: the disk is full", doing.verb())
        }
        ReadOnlyFilesystem => format!(
            "`{shown}` could not be {}: the file system is read-only",
            doing.verb()
        ),
        // The kind's own words ("entity not found"...), never the error's text, which
        // might carry a host path.
        kind => format!("`{shown}` could not be {}: {kind}", doing.verb()),
    };
    ToolError::new(message)
}

/// An error that `?` turns into a refusal of `shown`.
pub trait OrRefuse<T> {
    /// The refusal of `shown` while `doing` it.
    fn or_refuse(self, doing: Doing, shown: &str) -> Result<T, ToolError>;
}

impl<T> OrRefuse<T> for io::Result<T> {
    fn or_refuse(self, doing: Doing, shown: &str) -> Result<T, ToolError> {
        self.map_err(|error| refusal(&error, doing, shown))
    }
}
