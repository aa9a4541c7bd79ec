//! How many bytes a project's files hold, for its quota.

use cap_std::fs::Dir;
use plugin_sdk::ToolError;

use crate::refusal::{Doing, OrRefuse};
use crate::work::Job;

/// The bytes of every regular file beneath `root`, symlinks not followed (a link counts
/// as nothing; what it names is counted where it lives, or not at all when outside).
///
/// Walked afresh for each write, under the project's change lock: a file written or
/// removed by something other than the tools is counted at the next write.
pub fn used_bytes(root: &Dir, job: &Job) -> Result<u64, ToolError> {
    let mut total = 0u64;
    let mut pending = vec![root.try_clone().or_refuse(Doing::Inspecting, ".")?];
    while let Some(dir) = pending.pop() {
        for entry in dir.entries().or_refuse(Doing::Inspecting, ".")? {
            job.go_on()?;
            let entry = entry.or_refuse(Doing::Inspecting, ".")?;
            let file_type = entry.file_type().or_refuse(Doing::Inspecting, ".")?;
            if file_type.is_dir() {
                // A directory that vanished since it was listed holds nothing.
                if let Ok(sub) = entry.open_dir() {
                    pending.push(sub);
                }
            } else if file_type.is_file() {
                if let Ok(meta) = entry.metadata() {
                    total = total.saturating_add(meta.len());
                }
            }
        }
    }
    Ok(total)
}
