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
    meta_at(project, path).await
}

/// The metadata of `path`, checked or not: the file system layer keeps it beneath the
/// root either way.
pub(crate) async fn meta_at(project: &Project, path: ProjectPath) -> Result<PathMeta, ToolError> {
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
        Ok(PathMeta {
            kind,
            size: meta.len(),
            modified_at: rfc3339(modified.into_std()).ok_or_else(|| {
                ToolError::new(format!(
                    "`{shown}` has a modification time no calendar date can show"
                ))
            })?,
        })
    })
    .await
}

/// `time` in RFC 3339, UTC, to the second; `None` for a time beyond chrono's years (a
/// file system can store one).
fn rfc3339(time: std::time::SystemTime) -> Option<String> {
    let (secs, nanos) = match time.duration_since(std::time::UNIX_EPOCH) {
        Ok(after) => (i64::try_from(after.as_secs()).ok()?, after.subsec_nanos()),
        Err(before) => {
            let before = before.duration();
            let secs = i64::try_from(before.as_secs()).ok()?;
            match before.subsec_nanos() {
                0 => (-secs, 0),
                nanos => (-secs - 1, 1_000_000_000 - nanos),
            }
        }
    };
    let time: DateTime<Utc> = DateTime::from_timestamp(secs, nanos)?;
    Some(time.to_rfc3339_opts(SecondsFormat::Secs, true))
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::rfc3339;

    #[test]
    fn times_are_rfc3339_in_utc_and_times_past_any_calendar_are_none() {
        let time = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(rfc3339(time).as_deref(), Some("2023-11-14T22:13:20Z"));
        let before = UNIX_EPOCH - Duration::from_millis(1500);
        assert_eq!(rfc3339(before).as_deref(), Some("1969-12-31T23:59:58Z"));
        assert_eq!(rfc3339(UNIX_EPOCH + Duration::from_secs(1 << 62)), None);
    }
}
