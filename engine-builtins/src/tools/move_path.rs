//! `move_path`: a file or a directory renamed or moved within the project, in one step.

use std::io::ErrorKind;

use cap_std::fs::Dir;
use plugin_sdk::prelude::*;
use plugin_sdk::project::Project;

use super::{parent_of, root_of, sync_names, Kind};
use crate::lock::{self, AcrossProcesses};
use crate::path::{ProjectPath, Root, MAX_DEPTH_NAMES};
use crate::refusal::{refusal, Doing};
use crate::walk::walk;
use crate::work::{off_the_workers, Job};

/// The arguments of `move_path`.
#[derive(Debug, Deserialize, JsonSchema, ToolArgs)]
pub struct MoveArgs {
    /// The file or directory to move, relative to the project root (`drafts/intro.page`).
    pub from: String,
    /// Its new path, relative to the project root (`docs/intro/index.page`); the
    /// directory it goes into must exist.
    pub to: String,
    /// `true` to replace a file already at `to`; `false` refuses the move when `to`
    /// exists. A directory at `to` is never replaced.
    pub overwrite: bool,
}

/// What `move_path` did.
#[derive(Debug, Serialize, JsonSchema, PartialEq)]
pub struct Moved {
    /// Always `true`: a failure is an error instead.
    pub ok: bool,
    /// `true` when a file at `to` was replaced.
    pub replaced: bool,
}

/// Move or rename a file or directory within the project root, in one step: it is at
/// `from` or at `to`, never half-moved. The directory `to` goes into must exist
/// (`create_directory` makes one). An existing file at `to` is replaced only with
/// `overwrite`; a directory at `to` never is. A symbolic link is not moved by its path;
/// links inside a directory moved whole go with it.
#[define_tool(
    summary = { "en-US": "Move or rename a file or directory", "it-IT": "Sposta o rinomina un file o una cartella" },
    category = "files",
    destructive,
    idempotent = false,
    open_world = false,
    example = r#"{"from": "drafts/intro.page", "to": "docs/intro/index.page", "overwrite": false}"#,
)]
pub async fn move_path(args: MoveArgs, project: &Project) -> Result<Moved, ToolError> {
    let from = ProjectPath::parse(&args.from, Root::Refused)?;
    let to = ProjectPath::parse(&args.to, Root::Refused)?;
    move_at(project, from, to, args.overwrite).await
}

/// Moves `from` to `to`, checked or not: the file system layer keeps both beneath the
/// root either way.
pub(crate) async fn move_at(
    project: &Project,
    from: ProjectPath,
    to: ProjectPath,
    overwrite: bool,
) -> Result<Moved, ToolError> {
    let (from_shown, to_shown) = (from.shown(), to.shown());
    if from == to {
        return Err(ToolError::new(format!(
            "`{from_shown}` is both `from` and `to`: nothing to move"
        )));
    }
    if to.is_beneath(&from) {
        return Err(ToolError::new(format!(
            "`{to_shown}` is inside `{from_shown}`: a directory cannot be moved into itself"
        )));
    }
    let root = root_of(project)?;
    let in_process = lock::in_process(&root).await?;
    off_the_workers(move |job| {
        let _across = AcrossProcesses::take(&root, &in_process, Doing::Moving, job)?;
        let (from_dir, from_name) = parent_of(&root, &from, Doing::Moving, |shown| {
            format!("`{shown}` does not exist (or a directory on its way does not)")
        })?;
        let (to_dir, to_name) = parent_of(&root, &to, Doing::Moving, |shown| {
            format!("the directory of `{shown}` does not exist: create it with `create_directory` first")
        })?;
        let kind = movable(&from_dir, from_name, &from_shown)?;
        let replaced = replaceable(&to_dir, to_name, kind, overwrite, &to_shown)?;
        if kind == Kind::Directory && to.depth() > from.depth() {
            within_depth(&from_dir, from_name, to.depth(), job, &from_shown)?;
        }
        job.commit(|| {
            from_dir
                .rename(from_name, &to_dir, to_name)
                .map_err(|error| not_moved(&error, &from_shown, &to_shown))
        })?;
        sync_names(&from_dir);
        sync_names(&to_dir);
        Ok(Moved { ok: true, replaced })
    })
    .await
}

/// What `name` in `dir` is: a file or a directory, which a move takes; anything else is
/// refused, a symlink included (the tools never change links).
fn movable(dir: &Dir, name: &str, shown: &str) -> Result<Kind, ToolError> {
    let meta = dir
        .symlink_metadata(name)
        .map_err(|error| refusal(&error, Doing::Moving, shown))?;
    match Kind::of(meta.file_type()) {
        kind @ (Kind::File | Kind::Directory) => Ok(kind),
        Kind::Symlink => Err(ToolError::new(format!(
            "`{shown}` is a symbolic link: the file tools do not move links"
        ))),
        Kind::Other => Err(ToolError::new(format!(
            "`{shown}` is not a regular file or a directory (a FIFO, a socket or a device)"
        ))),
    }
}

/// Whether the move replaces what is at `name` in `dir` (`shown`): `false` when nothing
/// is there; `true` for a file that `overwrite` allows a file to replace; a refusal
/// otherwise.
fn replaceable(
    dir: &Dir,
    name: &str,
    moving: Kind,
    overwrite: bool,
    shown: &str,
) -> Result<bool, ToolError> {
    let meta = match dir.symlink_metadata(name) {
        Ok(meta) => meta,
        Err(error) if error.kind() == ErrorKind::NotFound => return Ok(false),
        Err(error) => return Err(refusal(&error, Doing::Moving, shown)),
    };
    let refused = match (Kind::of(meta.file_type()), moving) {
        (Kind::File, Kind::File) if overwrite => return Ok(true),
        (Kind::File, Kind::File) => {
            format!("`{shown}` already exists: pass `overwrite: true` to replace it")
        }
        (Kind::File, _) => format!("`{shown}` is a file, which a directory cannot replace"),
        (Kind::Directory, _) => format!(
            "`{shown}` is a directory, which a move never replaces: to move into it, give the path inside it (`{shown}/name`)"
        ),
        (Kind::Symlink, _) => format!("`{shown}` is a symbolic link, which a move never replaces"),
        (Kind::Other, _) => format!(
            "`{shown}` is not a regular file (a FIFO, a socket or a device), which a move never replaces"
        ),
    };
    Err(ToolError::new(refused))
}

/// Refuses a move of the directory `name` in `dir` to a path of `to_depth` names that
/// would put something in it deeper than a path may go: no tool could reach it, and each
/// level costs the quota's walk an open directory.
fn within_depth(
    dir: &Dir,
    name: &str,
    to_depth: usize,
    job: &Job,
    shown: &str,
) -> Result<(), ToolError> {
    let moved = dir
        .open_dir(name)
        .map_err(|error| refusal(&error, Doing::Moving, shown))?;
    walk(
        &moved,
        job,
        |error| refusal(&error, Doing::Moving, shown),
        |depth, _| {
            if to_depth + depth > MAX_DEPTH_NAMES {
                Err(ToolError::new(format!(
                    "moving `{shown}` there would put its contents {} names deep; a path may go at most {MAX_DEPTH_NAMES} deep",
                    to_depth + depth
                )))
            } else {
                Ok(())
            }
        },
    )
}

/// Why the rename itself failed, in the model's terms.
fn not_moved(error: &std::io::Error, from: &str, to: &str) -> ToolError {
    match error.raw_os_error() {
        Some(libc::EXDEV) => ToolError::new(format!(
            "`{from}` and `{to}` are on different file systems: a move never copies"
        )),
        // A directory moved beneath itself through a symlinked directory on `to`'s way.
        Some(libc::EINVAL) => ToolError::new(format!(
            "`{to}` is inside `{from}`: a directory cannot be moved into itself"
        )),
        _ => refusal(error, Doing::Moving, from),
    }
}
