//! `write_text_content`: a file created or replaced whole, never half-written.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};

use cap_std::fs::{Dir, OpenOptions};
use plugin_sdk::prelude::*;
use plugin_sdk::project::Project;

use super::root_of;
use crate::path::{ProjectPath, Root};
use crate::quota::used_bytes;
use crate::refusal::{Doing, OrRefuse};
use crate::work::{off_the_workers, Job};

/// The arguments of `write_text_content`.
#[derive(Debug, Deserialize, JsonSchema, ToolArgs)]
pub struct WriteArgs {
    /// Path relative to the project root, with `/` between names (`docs/intro/index.page`).
    pub path: String,
    /// The text content to write: the whole file.
    pub text: String,
}

/// What `write_text_content` did.
#[derive(Debug, Serialize, JsonSchema, PartialEq)]
pub struct Written {
    /// Always `true`: a failure is an error instead.
    pub ok: bool,
    /// `true` when the file did not exist before.
    pub created: bool,
    /// The file's size now, in bytes.
    pub size: u64,
}

/// Write text content to a file, creating it or overwriting it whole. The path is
/// relative to the project root, and its directory must exist (`create_directory` makes
/// one).
#[define_tool(
    summary = { "en-US": "Write a text file", "it-IT": "Scrivi un file di testo" },
    category = "files",
    destructive,
    idempotent,
    open_world = false,
    example = r##"{"path": "docs/intro/index.page", "text": "# Intro\n"}"##,
)]
pub async fn write_text_content(args: WriteArgs, project: &Project) -> Result<Written, ToolError> {
    let path = ProjectPath::parse(&args.path, Root::Refused)?;
    let limits = *project.limits();
    let size = args.text.len() as u64;
    if size > limits.max_file_bytes {
        return Err(ToolError::new(format!(
            "the text is {size} bytes, over the project's limit of {} bytes per file",
            limits.max_file_bytes
        )));
    }
    let root = root_of(project)?;
    let project = project.clone();
    off_the_workers(move |job| {
        let shown = path.shown();
        let (parent, name) = path.split_last().expect("Root::Refused gives a name");
        // Every step from here is relative to the parent's handle: a symlink swapped in
        // for a directory on the way after this cannot redirect the write.
        let dir = if parent.as_os_str().is_empty() {
            root.try_clone().or_refuse(Doing::Writing, ".")?
        } else {
            root.open_dir(&parent).map_err(|error| {
                if error.kind() == std::io::ErrorKind::NotFound {
                    ToolError::new(format!(
                        "the directory of `{shown}` does not exist: create it with `create_directory` first"
                    ))
                } else {
                    crate::refusal::refusal(&error, Doing::Writing, &shown)
                }
            })?
        };
        let _changes = project.lock_changes();
        let before = match dir.symlink_metadata(name) {
            Ok(meta) if meta.is_file() => Some(meta),
            Ok(meta) if meta.is_dir() => {
                return Err(ToolError::new(format!("`{shown}` is a directory")))
            }
            Ok(meta) if meta.is_symlink() => {
                return Err(ToolError::new(format!(
                    "`{shown}` is a symbolic link: write to the file it names instead"
                )))
            }
            Ok(_) => {
                return Err(ToolError::new(format!(
                    "`{shown}` is not a regular file (a FIFO, a socket or a device)"
                )))
            }
            Err(_) => None,
        };
        if let Some(quota) = limits.quota_bytes {
            let used = used_bytes(&root, job)?;
            let after = used - before.as_ref().map_or(0, |meta| meta.len().min(used)) + size;
            if after > quota {
                return Err(ToolError::new(format!(
                    "writing `{shown}` would bring the project's files to {after} bytes, over its quota of {quota} bytes"
                )));
            }
        }
        replace(&dir, name, &args.text, before.as_ref(), job, &shown)?;
        Ok(Written {
            ok: true,
            created: before.is_none(),
            size,
        })
    })
    .await
}

/// Writes `text` to a new file beside `name`, syncs it, and renames it over `name`: a
/// reader sees the old content or the new, never part of either, and of two writes to
/// one path the last rename wins whole.
fn replace(
    dir: &Dir,
    name: &str,
    text: &str,
    before: Option<&cap_std::fs::Metadata>,
    job: &Job,
    shown: &str,
) -> Result<(), ToolError> {
    let temporary = temporary_name();
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    let mut file = dir
        .open_with(&temporary, &options)
        .or_refuse(Doing::Writing, shown)?;
    let written = (|| {
        file.write_all(text.as_bytes())?;
        if let Some(before) = before {
            // The file keeps its permissions.
            file.set_permissions(before.permissions())?;
        }
        file.sync_all()
    })()
    .or_refuse(Doing::Writing, shown)
    .and_then(|()| {
        job.commit(|| {
            dir.rename(&temporary, dir, name)
                .or_refuse(Doing::Writing, shown)
        })
    });
    if written.is_err() {
        let _ = dir.remove_file(&temporary);
        return written;
    }
    // The rename itself is durable once the directory is synced.
    if let Ok(handle) = dir.try_clone() {
        let _ = handle.into_std_file().sync_all();
    }
    Ok(())
}

/// A name no other write uses: hidden, of fixed length whatever the target's.
fn temporary_name() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    // The clock's nanoseconds tell apart two engines with one pid sharing the directory.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.subsec_nanos());
    format!(
        ".write-{}-{nanos}-{}.tmp",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}
