//! `create_directory`: a directory and its missing parents.

use plugin_sdk::prelude::*;
use plugin_sdk::project::Project;

use super::{root_of, PathArgs};
use crate::path::{ProjectPath, Root};
use crate::refusal::{Doing, OrRefuse};
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
    let root = root_of(project)?;
    let project = project.clone();
    off_the_workers(move |job| {
        let shown = path.shown();
        let _changes = project.lock_changes();
        let relative = path.relative();
        match root.metadata(&relative) {
            Ok(meta) if meta.is_dir() => {
                return Ok(Created {
                    ok: true,
                    created: false,
                })
            }
            Ok(_) => {
                return Err(ToolError::new(format!(
                    "`{shown}` already exists and is not a directory"
                )))
            }
            Err(_) => {}
        }
        job.commit(|| {
            root.create_dir_all(&relative)
                .or_refuse(Doing::Creating, &shown)
        })?;
        Ok(Created {
            ok: true,
            created: true,
        })
    })
    .await
}
