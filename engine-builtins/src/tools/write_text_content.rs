//! `write_text_content`: a file created or replaced whole, never half-written.

use std::io::Write;

use cap_std::fs::{Dir, Metadata, OpenOptions, OpenOptionsExt, Permissions, PermissionsExt};
use plugin_sdk::prelude::*;
use plugin_sdk::project::Project;

use super::{parent_of, root_of, sync_names, temporary_name};
use crate::lock::{self, AcrossProcesses};
use crate::path::{ProjectPath, Root};
use crate::quota::{file_bytes, taken, used_bytes};
use crate::refusal::{refusal, Doing, OrRefuse};
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
    write_at(project, path, args.text).await
}

/// Writes `text` at `path`, checked or not: the file system layer keeps it beneath the
/// root either way.
pub(crate) async fn write_at(
    project: &Project,
    path: ProjectPath,
    text: String,
) -> Result<Written, ToolError> {
    let limits = *project.limits();
    let size = text.len() as u64;
    if size > limits.max_file_bytes {
        return Err(ToolError::new(format!(
            "the text is {size} bytes, over the project's limit of {} bytes per file",
            limits.max_file_bytes
        )));
    }
    let root = root_of(project)?;
    let in_process = lock::in_process(&root).await?;
    off_the_workers(move |job| {
        let shown = path.shown();
        let (dir, name) = parent_of(&root, &path, Doing::Writing, |shown| {
            format!("the directory of `{shown}` does not exist: create it with `create_directory` first")
        })?;
        let _across = AcrossProcesses::take(&root, &in_process, Doing::Writing, job)?;
        let before = replaceable(&dir, name, &shown)?;
        if let Some(quota) = limits.quota_bytes {
            let used = used_bytes(&root, job)?;
            let after = used
                .saturating_sub(before.as_ref().map_or(0, taken))
                .saturating_add(file_bytes(size));
            if after > quota {
                return Err(ToolError::new(format!(
                    "writing `{shown}` would bring the project's files to {after} bytes on disk, over its quota of {quota} bytes"
                )));
            }
        }
        replace(&dir, name, &text, before.as_ref(), job, &shown)?;
        Ok(Written {
            ok: true,
            created: before.is_none(),
            size,
        })
    })
    .await
}

/// What `name` in `dir` is now: nothing, or a regular file to replace. Anything else is
/// refused, a symlink included (whatever it names, the write would replace the link).
fn replaceable(dir: &Dir, name: &str, shown: &str) -> Result<Option<Metadata>, ToolError> {
    match dir.symlink_metadata(name) {
        Ok(meta) if meta.is_file() => Ok(Some(meta)),
        Ok(meta) if meta.is_dir() => Err(ToolError::new(format!("`{shown}` is a directory"))),
        Ok(meta) if meta.is_symlink() => Err(ToolError::new(format!(
            "`{shown}` is a symbolic link: write to the file it names instead"
        ))),
        Ok(_) => Err(ToolError::new(format!(
            "`{shown}` is not a regular file (a FIFO, a socket or a device)"
        ))),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(refusal(&error, Doing::Writing, shown)),
    }
}

/// Writes `text` to a new file beside `name`, syncs it, and renames it over `name`: a
/// reader sees the old content or the new, never part of either, and of two writes to
/// one path the last rename wins whole.
fn replace(
    dir: &Dir,
    name: &str,
    text: &str,
    before: Option<&Metadata>,
    job: &Job,
    shown: &str,
) -> Result<(), ToolError> {
    let temporary = temporary_name("write");
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    if let Some(before) = before {
        // Never more readable than the file it replaces, not even while written.
        options.mode(before.permissions().mode() & 0o777);
    }
    let mut file = dir
        .open_with(&temporary, &options)
        .or_refuse(Doing::Writing, shown)?;
    let written = (|| {
        file.write_all(text.as_bytes())?;
        if let Some(before) = before {
            // The file keeps its permissions, but never set-user-id, set-group-id or
            // sticky bits: text the model wrote is not to run with another's rights.
            let mode = before.permissions().mode() & 0o777;
            file.set_permissions(Permissions::from_mode(mode))?;
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
    sync_names(dir);
    Ok(())
}
