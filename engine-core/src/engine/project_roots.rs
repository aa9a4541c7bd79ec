//! What the model can write against what the engine reads: an agent's project root is
//! the one place the file tools write, so it may hold nothing the engine loads as
//! configuration, code or data (else a model writes a tool manifest into `tools.d` and
//! calls it, or edits the configuration the next reload applies), and lie inside none of
//! the directories the engine loads from.
//!
//! [`refuse_overlaps`] is the rule, made by `engine config check` and at every start and
//! reload; [`create_roots`] makes the roots it passed. External tools arrive while the
//! engine runs: [`in_a_root`] refuses a tool file, or a program one runs, that lies in a
//! root when it is installed, and a reload refuses roots that would hold one installed.

use std::path::{Path, PathBuf};

use super::error::EngineError;
use crate::config::{EngineConfig, ProjectConfig};
use crate::external::{ExtensionFile, FileState};

/// What the engine reads from disk while it runs, each with the words that name it in a
/// refusal: the extensions and providers directories (tools it runs, the model servers
/// its turns talk to), the configuration file (what a
/// reload applies), the data directory (its stores), the engine's own executable (what
/// the next start runs) and the home directory (what the programs it runs read).
fn loaded_paths(config: &EngineConfig) -> Vec<(PathBuf, &'static str, Relation)> {
    let mut paths = Vec::new();
    if let Some(extensions) = config.extensions_dir() {
        paths.push((extensions, "the extensions directory", Relation::Either));
    }
    // A provider file written there would send the agents' conversations elsewhere.
    if let Some(providers) = config.providers_dir() {
        paths.push((providers, "the providers directory", Relation::Either));
    }
    if let Some(file) = config.file() {
        // A root beside the file (`engine.toml` and `site/` in one directory) holds
        // nothing the engine reads: only one that holds the file's directory is refused.
        // The file as the system finds it: a link's target is what a reload reads.
        let file = resolved_path(file).unwrap_or_else(|_| file.to_owned());
        let dir = match file.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_owned(),
            _ => PathBuf::from("."),
        };
        paths.push((
            dir,
            "the configuration file's directory",
            Relation::RootHolds,
        ));
    }
    paths.push((
        config.data_dir(),
        "the engine's data directory",
        Relation::Either,
    ));
    if let Ok(executable) = std::env::current_exe() {
        paths.push((executable, "the engine's executable", Relation::RootHolds));
    }
    // Programs a tool runs read their settings and code from it (Python's per-user
    // packages, a shell's profile), and so may the engine's libraries.
    if let Some(home) = home_directory() {
        paths.push((
            home,
            "the home directory (HOME)",
            Relation::RootHoldsOrInHidden,
        ));
    }
    paths
}

/// The home directory the programs a tool runs take as theirs: `HOME`; an empty one is
/// `/` (as Python takes it); unset, the password file's entry for the user the engine
/// runs as (where Python and a shell then look).
fn home_directory() -> Option<PathBuf> {
    match std::env::var_os("HOME") {
        Some(home) if home.is_empty() => Some(PathBuf::from("/")),
        Some(home) => Some(PathBuf::from(home)),
        None => password_file_home(),
    }
}

#[cfg(unix)]
fn password_file_home() -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt as _;
    // The process's own directory belongs to the user it runs as.
    let uid = std::fs::metadata("/proc/self").ok()?.uid();
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|line| {
        let fields: Vec<&str> = line.split(':').collect();
        let theirs = fields.len() >= 7 && fields[2].parse::<u32>().ok()? == uid;
        theirs.then(|| PathBuf::from(fields[5]))
    })
}

#[cfg(not(unix))]
fn password_file_home() -> Option<PathBuf> {
    None
}

/// Which way a root and a loaded path may not meet.
#[derive(Clone, Copy)]
enum Relation {
    /// Neither may hold the other.
    Either,
    /// The root may not hold the path (nor be it).
    RootHolds,
    /// The root may not hold the directory, nor lie within one of its hidden entries
    /// (`~/.local`, `~/.config`: where programs read their code and settings from); a
    /// root elsewhere within it (`~/projects/site`) is fine.
    RootHoldsOrInHidden,
}

/// Whether `root` lies within an entry of `dir` whose name starts with `.`.
fn within_a_hidden_entry(dir: &Path, root: &Path) -> bool {
    root.strip_prefix(dir)
        .ok()
        .and_then(|inside| inside.components().next())
        .is_some_and(|first| first.as_os_str().to_string_lossy().starts_with('.'))
}

/// Refuses, creating nothing, a project root that holds, or (for a directory the
/// engine loads from) lies within, a path of [`loaded_paths`]; and two agents' roots of
/// which one holds the other (their changes would not share a lock, nor their quotas a
/// count). One root shared by several agents is fine. Paths are compared with every
/// symlink and `..` resolved, whether or not they exist yet.
///
/// `installed` are the external tool files installed, with the programs they run: a
/// root may hold none of them either.
pub(super) fn refuse_overlaps(
    config: &EngineConfig,
    installed: &[ExtensionFile],
) -> Result<(), EngineError> {
    let roots: Vec<&ProjectConfig> = config
        .agents
        .values()
        .filter_map(|agent| agent.project.as_ref())
        .collect();
    if roots.is_empty() {
        return Ok(());
    }
    let mut loaded = loaded_paths(config);
    for file in installed
        .iter()
        .filter(|file| file.state != FileState::Skipped)
    {
        loaded.push((
            file.path.clone(),
            "the external tool file",
            Relation::RootHolds,
        ));
        for program in &file.runs {
            loaded.push((
                program.clone(),
                "the program an external tool runs",
                Relation::RootHolds,
            ));
        }
    }
    let mut resolved = Vec::with_capacity(roots.len());
    for project in &roots {
        let failed = |source| EngineError::Project {
            root: project.root.clone(),
            source,
        };
        let root = resolved_path(&project.root).map_err(failed)?;
        for (path, what, relation) in &loaded {
            let other = resolved_path(path).map_err(failed)?;
            let meets = match relation {
                Relation::Either => other.starts_with(&root) || root.starts_with(&other),
                Relation::RootHolds => other.starts_with(&root),
                Relation::RootHoldsOrInHidden => {
                    other.starts_with(&root) || within_a_hidden_entry(&other, &root)
                }
            };
            if meets {
                return Err(overlap(
                    project,
                    format!(
                        "{what} {}, which the engine reads and the model must not write",
                        path.display()
                    ),
                ));
            }
        }
        resolved.push((project, root));
    }
    for (index, (project, root)) in resolved.iter().enumerate() {
        for (other, other_root) in &resolved[index + 1..] {
            if root != other_root && (root.starts_with(other_root) || other_root.starts_with(root))
            {
                return Err(overlap(
                    project,
                    format!("the project root {}", other.root.display()),
                ));
            }
        }
    }
    Ok(())
}

/// Why an external tool file (or a provider file) at `file`, running `runs`, is refused: it, or one of
/// them, lies in one of `config`'s project roots (a link's target counts, not the link).
pub(super) fn in_a_root(config: &EngineConfig, file: &Path, runs: &[PathBuf]) -> Option<String> {
    let roots: Vec<(PathBuf, &Path)> = config
        .agents
        .values()
        .filter_map(|agent| agent.project.as_ref())
        .filter_map(|project| Some((resolved_path(&project.root).ok()?, project.root.as_path())))
        .collect();
    if roots.is_empty() {
        return None;
    }
    std::iter::once(file)
        .chain(runs.iter().map(PathBuf::as_path))
        .find_map(|path| {
            // What cannot be told from here (a process's own entries, a loop of links)
            // might be in a root.
            let resolved = match resolved_path(path) {
                Ok(resolved) => resolved,
                Err(why) => {
                    return Some(format!(
                        "{why}: name the programs a tool runs by their own paths, so that none can lie in a project root"
                    ))
                }
            };
            let (_, root) = roots.iter().find(|(root, _)| resolved.starts_with(root))?;
            Some(format!(
                "{} lies in the project root {}, which the model writes: keep tool and provider files, and the programs tools run, outside every project root",
                path.display(),
                root.display()
            ))
        })
}

/// Creates the agents' project roots where missing, once [`refuse_overlaps`] passed them.
pub(super) fn create_roots(config: &EngineConfig) -> Result<(), EngineError> {
    for project in config
        .agents
        .values()
        .filter_map(|agent| agent.project.as_ref())
    {
        std::fs::create_dir_all(&project.root).map_err(|source| EngineError::Project {
            root: project.root.clone(),
            source,
        })?;
    }
    Ok(())
}

/// `path` as the system will find it, whether or not it exists yet: absolute, with
/// every link followed (a dangling one too: what it names is where a file written
/// through it lands) and every `.` and `..` taken as the system takes them, after the
/// links before them. Refused past [`MAX_LINKS`] links (a loop).
fn resolved_path(path: &Path) -> std::io::Result<PathBuf> {
    use std::path::Component;
    /// Puts `path`'s parts before those `pending` holds (kept in reverse: the next part
    /// is the last).
    fn push_front(pending: &mut Vec<std::ffi::OsString>, path: &Path) {
        let parts: Vec<_> = path
            .components()
            .filter_map(|part| match part {
                Component::Normal(name) => Some(name.to_owned()),
                Component::ParentDir => Some("..".into()),
                Component::CurDir | Component::RootDir | Component::Prefix(_) => None,
            })
            .collect();
        pending.extend(parts.into_iter().rev());
    }
    let mut pending = Vec::new();
    let absolute = std::path::absolute(path)?;
    push_front(&mut pending, &absolute);
    let mut resolved = PathBuf::from("/");
    let mut links = 0;
    while let Some(part) = pending.pop() {
        if part == ".." {
            resolved.pop();
            continue;
        }
        // A process's own entries (`/proc/self/cwd`, `/dev/fd`'s target) mean another
        // thing in each process: what they name for a tool is not what they name here.
        let own = |part: &std::ffi::OsStr| {
            let part = part.to_string_lossy();
            part == "self" || part == "thread-self" || part.bytes().all(|b| b.is_ascii_digit())
        };
        if resolved == Path::new("/proc") && own(&part) {
            return Err(std::io::Error::other(format!(
                "{} leads through /proc/{}, which names something else in each process",
                path.display(),
                part.to_string_lossy()
            )));
        }
        let candidate = resolved.join(&part);
        match std::fs::symlink_metadata(&candidate) {
            Ok(meta) if meta.file_type().is_symlink() => {
                links += 1;
                if links > MAX_LINKS {
                    return Err(std::io::Error::other(format!(
                        "{} leads through more than {MAX_LINKS} links",
                        path.display()
                    )));
                }
                let target = std::fs::read_link(&candidate)?;
                if target.is_absolute() {
                    resolved = PathBuf::from("/");
                }
                push_front(&mut pending, &target);
            }
            // A file or directory, or nothing yet: taken as it is named.
            _ => resolved = candidate,
        }
    }
    Ok(resolved)
}

/// The most links one path may lead through, as Linux allows.
const MAX_LINKS: usize = 40;

fn overlap(project: &ProjectConfig, what: String) -> EngineError {
    EngineError::Project {
        root: project.root.clone(),
        source: std::io::Error::other(format!(
            "it overlaps {what}: give the project a directory of its own"
        )),
    }
}
