//! `list_files`: the entries of a directory, optionally recursive, always capped.

use cap_std::fs::Dir;
use plugin_sdk::prelude::*;
use plugin_sdk::project::Project;

use super::{root_of, Kind};
use crate::path::{ProjectPath, Root};
use crate::refusal::{Doing, OrRefuse};
use crate::work::{off_the_workers, Job};

/// The deepest a recursive listing goes.
pub const MAX_DEPTH: u32 = 32;

/// The most names of one directory read and sorted (a bigger directory's listing is cut
/// among its first names read, and says so).
const MAX_NAMES_SORTED: usize = 100_000;

/// The arguments of `list_files`.
#[derive(Debug, Deserialize, JsonSchema, ToolArgs)]
pub struct ListArgs {
    /// Path of the directory relative to the project root; `.` for the root itself.
    pub path: String,
    /// Whether to list subdirectories' entries too; null: no.
    pub recursive: Option<bool>,
    /// How many levels of subdirectories a recursive listing goes down, 1 to 32; null: 32.
    pub max_depth: Option<u32>,
    /// The most entries to return; null or more than the project allows: the project's
    /// limit.
    pub max_entries: Option<u32>,
}

/// A directory's entries.
#[derive(Debug, Serialize, JsonSchema, PartialEq)]
pub struct Listing {
    /// Each entry, by name; a recursive listing names entries below with their path
    /// from the listed directory (`intro/index.page`).
    pub entries: Vec<Entry>,
    /// `true` when the listing stopped at the most entries: there are more.
    pub truncated: bool,
    /// Entries left out because their names are not UTF-8 (no tool could name them).
    pub skipped: u32,
}

/// One entry of a listing.
#[derive(Debug, Serialize, JsonSchema, PartialEq)]
pub struct Entry {
    /// Its name, or its path from the listed directory.
    pub name: String,
    /// `file`, `directory`, `symlink` (never followed) or `other`.
    #[serde(rename = "type")]
    pub kind: Kind,
}

/// List the files and subdirectories inside a directory, given its path relative to the
/// project root (`.` for the root). With `recursive`, subdirectories' entries are listed
/// too, down to `max_depth` levels. Entries are sorted by name within each directory; a
/// listing cut at its most entries says `truncated`.
#[define_tool(
    summary = { "en-US": "List a directory's files", "it-IT": "Elenca i file di una cartella" },
    category = "files",
    read_only,
    idempotent,
    open_world = false,
    example = r#"{"path": "docs", "recursive": true, "max_depth": 2, "max_entries": null}"#,
    example = r#"{"path": ".", "recursive": null, "max_depth": null, "max_entries": 50}"#,
)]
pub async fn list_files(args: ListArgs, project: &Project) -> Result<Listing, ToolError> {
    let path = ProjectPath::parse(&args.path, Root::Allowed)?;
    let limit = project.limits().max_list_entries;
    let max_entries = args
        .max_entries
        .map_or(limit, |asked| (asked as usize).min(limit));
    let depth = match (args.recursive.unwrap_or(false), args.max_depth) {
        (false, _) => 1,
        (true, None) => MAX_DEPTH,
        (true, Some(depth @ 1..=MAX_DEPTH)) => depth,
        (true, Some(depth)) => {
            return Err(ToolError::invalid_arguments(format!(
                "`max_depth` is {depth}: give 1 to {MAX_DEPTH}, or null"
            )))
        }
    };
    listing_at(project, path, depth, max_entries).await
}

/// Lists `path`, checked or not: the file system layer keeps it beneath the root either
/// way.
pub(crate) async fn listing_at(
    project: &Project,
    path: ProjectPath,
    depth: u32,
    max_entries: usize,
) -> Result<Listing, ToolError> {
    let root = root_of(project)?;
    off_the_workers(move |job| {
        let shown = path.shown();
        let dir = if path.is_root() {
            root
        } else {
            root.open_dir(path.relative()).map_err(|error| {
                if error.kind() == std::io::ErrorKind::NotADirectory {
                    ToolError::new(format!(
                        "`{shown}` is a file, not a directory: read it with `get_text_content`"
                    ))
                } else {
                    crate::refusal::refusal(&error, Doing::Listing, &shown)
                }
            })?
        };
        let mut walk = Walk {
            listing: Listing {
                entries: Vec::new(),
                truncated: false,
                skipped: 0,
            },
            max_entries,
            job,
        };
        walk.directory(&dir, "", depth, &shown)?;
        Ok(walk.listing)
    })
    .await
}

/// A listing under way.
struct Walk<'j> {
    listing: Listing,
    max_entries: usize,
    job: &'j Job,
}

impl Walk<'_> {
    /// Lists `dir`, whose path from the listed directory is `prefix`, and `depth - 1`
    /// levels below it, depth first in name order.
    fn directory(
        &mut self,
        dir: &Dir,
        prefix: &str,
        depth: u32,
        shown: &str,
    ) -> Result<(), ToolError> {
        // Every name, up to a bound, so that a cut listing holds the first names in order;
        // then only those that fit (and one to tell that more are left).
        let mut names = Vec::new();
        for entry in dir.entries().or_refuse(Doing::Listing, shown)? {
            self.job.go_on()?;
            let Ok(entry) = entry else { continue };
            match entry.file_name().into_string() {
                Ok(name) => names.push((name, entry.file_type().ok().map(Kind::of))),
                Err(_) => self.listing.skipped += 1,
            }
            if names.len() > MAX_NAMES_SORTED {
                break;
            }
        }
        names.sort_unstable_by(|(a, _), (b, _)| a.cmp(b));
        names.truncate(self.max_entries - self.listing.entries.len() + 1);
        names.shrink_to_fit();
        for (name, kind) in names {
            if self.listing.entries.len() == self.max_entries {
                self.listing.truncated = true;
                return Ok(());
            }
            let kind = match kind {
                Some(Kind::Other) | None => kind_of(dir, &name),
                Some(kind) => kind,
            };
            let path = ProjectPath::join_shown(prefix, &name);
            self.listing.entries.push(Entry {
                name: path.clone(),
                kind,
            });
            // Opened beneath `dir`: a directory swapped for a symlink since it was
            // listed is followed only while it stays beneath the root.
            if kind == Kind::Directory && depth > 1 {
                if let Ok(sub) = dir.open_dir(&name) {
                    self.directory(&sub, &path, depth - 1, shown)?;
                }
            }
        }
        Ok(())
    }
}

/// The kind of `name` in `dir`, not following a symlink, from its metadata: for an
/// entry whose type the directory did not give (some file systems leave it to a `stat`).
fn kind_of(dir: &Dir, name: &str) -> Kind {
    dir.symlink_metadata(name)
        .map_or(Kind::Other, |meta| Kind::of(meta.file_type()))
}
