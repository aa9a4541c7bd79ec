//! `create_directory`: a directory and its missing parents.

use std::io::ErrorKind;

use plugin_sdk::prelude::*;
use plugin_sdk::project::Project;

use super::{root_of, PathArgs};
use crate::lock::{self, AcrossProcesses};
use crate::path::{ProjectPath, Root};
use crate::quota::{used_bytes, BLOCK_BYTES};
use crate::refusal::{refusal, Doing, OrRefuse};
use crate::work::off_the_workers;

/// What `create_directory` did.
#[derive(Debug, Serialize, JsonSchema, PartialEq)]
pub struct Created {
    /// Always `true`: a failure is an error instead.
    pub ok: bool,
    /// `false` when the directory existed already.
    pub created: bool,
}

/// Create a directory and any missing parent directories at the given path, relative to
/// the project root. A directory that exists already is left as it is.
#[define_tool(
    summary = { "en-US": "Create a directory", "it-IT": "Crea una cartella" },
    category = "files",
    destructive = false,
    idempotent,
    open_world = false,
    example = r#"{"path": "docs/intro"}"#,
)]
pub async fn create_directory(args: PathArgs, project: &Project) -> Result<Created, ToolError> {
    let path = ProjectPath::parse(&args.path, Root::Refused)?;
    create_at(project, path).await
}

/// Creates `path`, checked or not: the file system layer keeps it beneath the root
/// either way.
pub(crate) async fn create_at(project: &Project, path: ProjectPath) -> Result<Created, ToolError> {
    let quota = project.limits().quota_bytes;
    let root = root_of(project)?;
    let in_process = lock::in_process(&root).await?;
    off_the_workers(move |job| {
        let shown = path.shown();
        let _across = AcrossProcesses::take(&root, &in_process, Doing::Creating, job)?;
        // How many directories are missing, from the path's end: `metadata` follows a
        // symlink only while it stays beneath the root, and says so when one leads out.
        let mut missing = 0u64;
        let mut existing = path.relative();
        loop {
            if existing.as_os_str().is_empty() {
                break;
            }
            match root.metadata(&existing) {
                Ok(meta) if meta.is_dir() => break,
                Ok(_) if missing == 0 => {
                    return Err(ToolError::new(format!(
                        "`{shown}` already exists and is not a directory"
                    )))
                }
                Ok(_) => {
                    return Err(ToolError::new(format!(
                        "a name on the way to `{shown}` is a file, not a directory"
                    )))
                }
                Err(error) if error.kind() == ErrorKind::NotFound => {
                    missing += 1;
                    existing.pop();
                }
                Err(error) => return Err(refusal(&error, Doing::Creating, &shown)),
            }
        }
        if missing == 0 {
            return Ok(Created {
                ok: true,
                created: false,
            });
        }
        if let Some(quota) = quota {
            let after = used_bytes(&root, job)?.saturating_add(missing * BLOCK_BYTES);
            if after > quota {
                return Err(ToolError::new(format!(
                    "creating `{shown}` would bring the project's files to {after} bytes on disk, over its quota of {quota} bytes"
                )));
            }
        }
        job.commit(|| root.create_dir_all(path.relative()).or_refuse(Doing::Creating, &shown))?;
        Ok(Created {
            ok: true,
            created: true,
        })
    })
    .await
}
