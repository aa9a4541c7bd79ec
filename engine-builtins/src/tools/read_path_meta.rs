//! `read_path_meta`: whether a path is a file or a directory, its size, its last change.

use chrono::{DateTime, SecondsFormat, Utc};
use plugin_sdk::prelude::*;
use plugin_sdk::project::Project;

use super::{root_of, Kind, PathArgs};
use crate::path::{ProjectPath, Root};
use crate::refusal::{Doing, OrRefuse};
use crate::work::off_the_workers;

/// Metadata of a file or directory.
#[derive(Debug, Serialize, JsonSchema, PartialEq)]
pub struct PathMeta {
    /// `file` or `directory`.
    #[serde(rename = "type")]
    pub kind: Kind,
    /// Its size in bytes.
    pub size: u64,
    /// When it last changed, in RFC 3339 (UTC).
    #[serde(rename = "modifiedAt")]
    pub modified_at: String,
}

/// Get metadata for a file or directory: its type (file or directory), size in bytes, and
/// last-modified time (RFC 3339, UTC). The path is relative to the project root; `.` is
/// the root itself.
#[define_tool(
    summary = { "en-US": "Read a file's or directory's metadata", "it-IT": "Leggi i metadati di un file o di una cartella" },
    category = "files",
    read_only,
    idempotent,
    open_world = false,
    example = r#"{"path": "docs/intro/index.page"}"#,
)]
pub async fn read_path_meta(args: PathArgs, project: &Project) -> Result<PathMeta, ToolError> {
    let path = ProjectPath::parse(&args.path, Root::Allowed)?;
    let root = root_of(project)?;
    off_the_workers(move |_| {
        let shown = path.shown();
        // Follows a symlink that stays beneath the root, as `stat` would; cap-std refuses
        // one that leads out.
        let meta = if path.is_root() {
            root.dir_metadata()
        } else {
            root.metadata(path.relative())
        }
        .or_refuse(Doing::Inspecting, &shown)?;
        let kind = Kind::of(meta.file_type());
        if kind == Kind::Other {
            return Err(ToolError::new(format!(
                "`{shown}` is neither a file nor a directory (a FIFO, a socket or a device)"
            )));
        }
        let modified = meta.modified().or_refuse(Doing::Inspecting, &shown)?;
        let modified: DateTime<Utc> = modified.into_std().into();
        Ok(PathMeta {
            kind,
            size: meta.len(),
            modified_at: modified.to_rfc3339_opts(SecondsFormat::Secs, true),
        })
    })
    .await
}
