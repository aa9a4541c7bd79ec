//! A walk of every entry beneath a directory, for the quota's measure and a deletion's
//! count: depth first, with one open directory per level, never following a symlink.

use std::ffi::OsString;

use cap_std::fs::{Dir, Metadata};
use plugin_sdk::ToolError;

use crate::work::Job;

/// Calls `visit` with each entry beneath `top` (not `top` itself): its depth below `top`
/// (1 for `top`'s own entries) and its metadata, a symlink's own. An entry removed while
/// the walk runs is passed over; any other error is `unreadable`'s refusal. The first
/// refusal `visit` answers stops the walk. The job's cancellation is checked at each
/// entry.
pub fn walk(
    top: &Dir,
    job: &Job,
    unreadable: impl Fn(std::io::Error) -> ToolError,
    mut visit: impl FnMut(usize, &Metadata) -> Result<(), ToolError>,
) -> Result<(), ToolError> {
    // Each level: its directory and the subdirectories still to walk. A level's listing
    // is closed before the walk goes down, so a level holds one open handle.
    let mut levels: Vec<(Dir, Vec<OsString>)> = Vec::new();
    let first = top.try_clone().map_err(&unreadable)?;
    let subdirectories = list(&first, 1, job, &unreadable, &mut visit)?;
    levels.push((first, subdirectories));
    while let Some((dir, pending)) = levels.last_mut() {
        let Some(name) = pending.pop() else {
            levels.pop();
            continue;
        };
        let sub = match dir.open_dir(&name) {
            Ok(sub) => sub,
            // Removed since it was listed.
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue,
            Err(error) => return Err(unreadable(error)),
        };
        let depth = levels.len() + 1;
        let subdirectories = list(&sub, depth, job, &unreadable, &mut visit)?;
        levels.push((sub, subdirectories));
    }
    Ok(())
}

/// Visits the entries of `dir`, at `depth`; answers its subdirectories' names.
fn list(
    dir: &Dir,
    depth: usize,
    job: &Job,
    unreadable: &impl Fn(std::io::Error) -> ToolError,
    visit: &mut impl FnMut(usize, &Metadata) -> Result<(), ToolError>,
) -> Result<Vec<OsString>, ToolError> {
    let mut subdirectories = Vec::new();
    for entry in dir.entries().map_err(unreadable)? {
        job.go_on()?;
        let entry = entry.map_err(unreadable)?;
        let meta = match entry.metadata() {
            Ok(meta) => meta,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue,
            Err(error) => return Err(unreadable(error)),
        };
        visit(depth, &meta)?;
        if meta.is_dir() {
            subdirectories.push(entry.file_name());
        }
    }
    Ok(subdirectories)
}
