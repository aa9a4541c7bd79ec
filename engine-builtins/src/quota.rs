//! What a project's files take on disk, for its quota.

use cap_std::fs::{Dir, Metadata, MetadataExt};
use plugin_sdk::ToolError;

use crate::walk::walk;
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
/// Walked afresh for each change, under the root's change lock: a file changed by
/// something other than the tools is counted at the next change. Anything that cannot be
/// measured refuses the change rather than counting as nothing.
pub fn used_bytes(root: &Dir, job: &Job) -> Result<u64, ToolError> {
    let mut total = 0u64;
    walk(root, job, unmeasured, |_, meta| {
        total = total.saturating_add(taken(meta));
        Ok(())
    })?;
    Ok(total)
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
