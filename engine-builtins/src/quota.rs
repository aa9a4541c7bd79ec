//! What a project's files take on disk, for its quota.

use std::ffi::OsString;

use cap_std::fs::{Dir, Metadata, MetadataExt};
use plugin_sdk::ToolError;

use crate::work::Job;

/// A block of the common file systems: what a new directory is counted as taking, and
/// what a new file's size is rounded up to.
pub const BLOCK_BYTES: u64 = 4096;

/// What a file of `size` bytes will take, as counted before it is written.
pub fn file_bytes(size: u64) -> u64 {
    size.div_ceil(BLOCK_BYTES)
        .max(1)
        .saturating_mul(BLOCK_BYTES)
}

/// What the entries beneath `root` take: for each, its size, its allocated blocks or one
/// block, whichever is most, so that empty files, directories and symlinks count too
/// (inodes run out before bytes do otherwise). Symlinks are not followed (what one names
/// is counted where it lives, or not at all when outside).
///
/// Walked afresh for each change, under the root's change lock, depth first with one open
/// directory per level (paths through the tools go at most 32 deep): a file changed by
/// something other than the tools is counted at the next change. Anything that cannot be
/// measured refuses the change rather than counting as nothing.
pub fn used_bytes(root: &Dir, job: &Job) -> Result<u64, ToolError> {
    let mut total = 0u64;
    // Each level: its directory and the subdirectories still to walk. A level's listing
    // is closed before the walk goes down, so a level holds one open handle.
    let mut levels: Vec<(Dir, Vec<OsString>)> = Vec::new();
    let first = root.try_clone().map_err(unmeasured)?;
    let subdirectories = measure(&first, &mut total, job)?;
    levels.push((first, subdirectories));
    while let Some((dir, pending)) = levels.last_mut() {
        let Some(name) = pending.pop() else {
            levels.pop();
            continue;
        };
        let sub = match dir.open_dir(&name) {
            Ok(sub) => sub,
            // Removed since it was listed: it takes nothing.
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue,
            Err(error) => return Err(unmeasured(error)),
        };
        let subdirectories = measure(&sub, &mut total, job)?;
        levels.push((sub, subdirectories));
    }
    Ok(total)
}

/// Adds what the entries of `dir` take to `total`; answers its subdirectories' names.
fn measure(dir: &Dir, total: &mut u64, job: &Job) -> Result<Vec<OsString>, ToolError> {
    let mut subdirectories = Vec::new();
    for entry in dir.entries().map_err(unmeasured)? {
        job.go_on()?;
        let entry = entry.map_err(unmeasured)?;
        let meta = match entry.metadata() {
            Ok(meta) => meta,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue,
            Err(error) => return Err(unmeasured(error)),
        };
        *total = total.saturating_add(taken(&meta));
        if meta.is_dir() {
            subdirectories.push(entry.file_name());
        }
    }
    Ok(subdirectories)
}

/// What one entry is counted as taking.
pub fn taken(meta: &Metadata) -> u64 {
    meta.len()
        .max(meta.blocks().saturating_mul(512))
        .max(BLOCK_BYTES)
}

/// Why a change is refused when the project cannot be measured: the error's kind, never
/// its text.
fn unmeasured(error: std::io::Error) -> ToolError {
    ToolError::new(format!(
        "the project's files could not be measured against its quota ({}), so nothing was changed",
        error.kind()
    ))
}
