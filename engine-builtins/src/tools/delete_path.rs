//! `delete_path`: a file, an empty directory, or a directory with what it holds on
//! request, gone at once.

use std::io::ErrorKind;

use cap_std::fs::Dir;
use plugin_sdk::prelude::*;
use plugin_sdk::project::Project;

use super::{parent_of, root_of, sync_names, temporary_name, Kind};
use crate::lock::{self, AcrossProcesses};
use crate::path::{ProjectPath, Root};
use crate::refusal::{refusal, Doing};
use crate::walk::walk;
use crate::work::{off_the_workers, Job};

/// The arguments of `delete_path`.
#[derive(Debug, Deserialize, JsonSchema, ToolArgs)]
pub struct DeleteArgs {
    /// Path relative to the project root, with `/` between names (`drafts/old.page`).
    pub path: String,
    /// `true` to delete a directory with everything in it (up to the project's listing
    /// cap of entries beneath it); `false` deletes only a file or an empty directory.
    pub recursive: bool,
}

/// What `delete_path` did.
#[derive(Debug, Serialize, JsonSchema, PartialEq)]
pub struct Deleted {
    /// Always `true`: a failure is an error instead.
    pub ok: bool,
    /// What was deleted: `file` or `directory` (`other` for a FIFO, a socket or a
    /// device).
    #[serde(rename = "type")]
    pub kind: Kind,
    /// How many entries were deleted: 1, or a directory and everything it held.
    pub removed: u64,
}

/// Delete a file or an empty directory at the given path, relative to the project root.
/// A directory that holds something is deleted only with `recursive`, with everything in
/// it, and only up to the project's cap of entries beneath it; it disappears at once,
/// never half deleted. A symbolic link is not deleted by its path; links inside a
/// directory deleted whole go with it (never what they name).
#[define_tool(
    summary = { "en-US": "Delete a file or directory", "it-IT": "Elimina un file o una cartella" },
    category = "files",
    destructive,
    idempotent,
    open_world = false,
    example = r#"{"path": "drafts/old.page", "recursive": false}"#,
)]
pub async fn delete_path(args: DeleteArgs, project: &Project) -> Result<Deleted, ToolError> {
    let path = ProjectPath::parse(&args.path, Root::Refused)?;
    delete_at(project, path, args.recursive).await
}

/// Deletes `path`, checked or not: the file system layer keeps it beneath the root
/// either way.
pub(crate) async fn delete_at(
    project: &Project,
    path: ProjectPath,
    recursive: bool,
) -> Result<Deleted, ToolError> {
    let cap = project.limits().max_list_entries;
    let root = root_of(project)?;
    let in_process = lock::in_process(&root).await?;
    off_the_workers(move |job| {
        let shown = path.shown();
        let _across = AcrossProcesses::take(&root, &in_process, Doing::Deleting, job)?;
        let (dir, name) = parent_of(&root, &path, Doing::Deleting, |shown| {
            format!("`{shown}` does not exist (or a directory on its way does not)")
        })?;
        let meta = dir
            .symlink_metadata(name)
            .map_err(|error| refusal(&error, Doing::Deleting, &shown))?;
        let kind = Kind::of(meta.file_type());
        let removed = match kind {
            Kind::Symlink => {
                return Err(ToolError::new(format!(
                    "`{shown}` is a symbolic link: the file tools do not delete links"
                )))
            }
            Kind::File | Kind::Other => {
                job.commit(|| {
                    dir.remove_file(name)
                        .map_err(|error| refusal(&error, Doing::Deleting, &shown))
                })?;
                1
            }
            Kind::Directory if !recursive => {
                job.commit(|| {
                    dir.remove_dir(name).map_err(|error| {
                        if error.kind() == ErrorKind::DirectoryNotEmpty {
                            ToolError::new(format!(
                                "`{shown}` is a directory that is not empty: pass `recursive: true` to delete it with everything in it"
                            ))
                        } else {
                            refusal(&error, Doing::Deleting, &shown)
                        }
                    })
                })?;
                1
            }
            Kind::Directory => delete_tree(&dir, name, cap, job, &shown)?,
        };
        sync_names(&dir);
        Ok(Deleted {
            ok: true,
            kind,
            removed,
        })
    })
    .await
}

/// Deletes the directory `name` in `dir` and all it holds, when that is at most `cap`
/// entries: counted first (nothing is deleted past the cap), then renamed to a hidden
/// name in one step (the path is gone at once, and the call's cancellation is checked
/// there for the last time: a call cancelled while the tree is emptied is answered so,
/// and the tree is gone all the same), then emptied, the links in it removed as names.
/// Answers how many entries went, itself included. Should the emptying fail part way,
/// what is left goes back to its name.
fn delete_tree(
    dir: &Dir,
    name: &str,
    cap: usize,
    job: &Job,
    shown: &str,
) -> Result<u64, ToolError> {
    let tree = dir
        .open_dir(name)
        .map_err(|error| refusal(&error, Doing::Deleting, shown))?;
    let mut held = 0usize;
    walk(
        &tree,
        job,
        |error| refusal(&error, Doing::Deleting, shown),
        |_, _| {
            held += 1;
            if held > cap {
                Err(ToolError::new(format!(
                    "`{shown}` holds more than {cap} entries beneath it, the most one call deletes: delete its subdirectories one by one"
                )))
            } else {
                Ok(())
            }
        },
    )?;
    drop(tree);
    let hidden = temporary_name("delete");
    job.commit(|| {
        dir.rename(name, dir, &hidden)
            .map_err(|error| refusal(&error, Doing::Deleting, shown))
    })?;
    if let Err(error) = dir.remove_dir_all(&hidden) {
        let kind = error.kind();
        let left = if dir.rename(&hidden, dir, name).is_ok() {
            format!("what is left of it is back at `{shown}`")
        } else {
            format!("what is left of it is in the hidden directory `{hidden}` beside it")
        };
        return Err(ToolError::new(format!(
            "`{shown}` was deleted only in part ({kind}): {left}"
        )));
    }
    Ok(held as u64 + 1)
}
