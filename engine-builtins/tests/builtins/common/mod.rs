//! A project in a scratch directory with something outside it to protect, and calls of
//! the built-ins as the engine makes them: JSON arguments through the tool's descriptor.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use plugin_sdk::engine::{linked_tools, CallInput};
use plugin_sdk::project::{Project, ProjectLimits};
use plugin_sdk::ToolContext;
use serde_json::Value;

// The crate's tools register when it is linked.
use engine_builtins as _;

/// The seven tools.
pub const TOOLS: [&str; 7] = [
    "create_directory",
    "delete_path",
    "get_text_content",
    "list_files",
    "move_path",
    "read_path_meta",
    "write_text_content",
];

/// A scratch directory, removed on drop: `root/` is the project; beside it are
/// `secret.txt` and `outside/keep.txt`, which no call may reach; inside, `docs/readme.md`
/// and symlinks that lead out (`link_out` to `outside/`, `file_out` to `secret.txt`,
/// `abs_out` to the absolute path of `outside/`, never to a host directory that a test
/// run as root could harm if confinement broke).
pub struct Scratch {
    pub dir: PathBuf,
    pub project: Project,
}

impl Scratch {
    pub fn new(name: &str) -> Self {
        Self::with_limits(name, limits())
    }

    pub fn with_limits(name: &str, limits: ProjectLimits) -> Self {
        let dir =
            std::env::temp_dir().join(format!("engine-builtins-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("root/docs")).unwrap();
        fs::create_dir_all(dir.join("outside")).unwrap();
        fs::write(dir.join("secret.txt"), "the host's secret\n").unwrap();
        fs::write(dir.join("outside/keep.txt"), "keep me\n").unwrap();
        fs::write(dir.join("root/docs/readme.md"), "# Readme\n").unwrap();
        symlink("../outside", dir.join("root/link_out")).unwrap();
        symlink("../secret.txt", dir.join("root/file_out")).unwrap();
        symlink(dir.join("outside"), dir.join("root/abs_out")).unwrap();
        let project = Project::new(fs::File::open(dir.join("root")).unwrap(), limits);
        Self { dir, project }
    }

    pub fn root(&self) -> PathBuf {
        self.dir.join("root")
    }

    /// Calls `tool` with `arguments`: its JSON output, or its error's message.
    pub async fn call(&self, tool: &str, arguments: &str) -> Result<Value, String> {
        call(&self.project, tool, arguments).await
    }

    /// Everything in the scratch directory outside the root: each path with its kind and
    /// content (a symlink's target), so that a change shows as a difference.
    pub fn outside(&self) -> BTreeMap<PathBuf, String> {
        let mut seen = BTreeMap::new();
        snapshot(&self.dir, &self.dir, &mut seen, Some(&self.root()));
        seen
    }

    /// Everything beneath the root, as [`Scratch::outside`] shows it.
    pub fn inside(&self) -> BTreeMap<PathBuf, String> {
        let mut seen = BTreeMap::new();
        snapshot(&self.root(), &self.root(), &mut seen, None);
        seen
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// The limits of the scratch projects: small enough to reach in a test.
pub fn limits() -> ProjectLimits {
    ProjectLimits {
        max_file_bytes: 64 * 1024,
        max_list_entries: 100,
        quota_bytes: None,
    }
}

/// Calls `tool` of the built-ins in `project`, as dispatch does.
pub async fn call(project: &Project, tool: &str, arguments: &str) -> Result<Value, String> {
    let descriptor = linked_tools()
        .find(|descriptor| descriptor.name == tool)
        .unwrap_or_else(|| panic!("no built-in `{tool}`"));
    let context = ToolContext::new().with_project(project.clone());
    match descriptor
        .entry
        .call(CallInput::new(arguments, &context))
        .await
    {
        Ok(output) => Ok(serde_json::from_str(&output).expect("JSON output")),
        Err(error) => {
            let message = error.message().to_owned();
            let temp = std::env::temp_dir().display().to_string();
            for host in [temp.as_str(), "/proc/", "/root/", "/home/"] {
                assert!(
                    !message.contains(host),
                    "a refusal names a host path: {message}"
                );
            }
            Err(message)
        }
    }
}

/// Calls `tool` `times` times at once, in turn through `scratch`'s project and a second
/// agent's on the same root (its own `Project`, one lock between them), the `index`th
/// with `arguments(index)`: how many succeeded.
pub async fn calls_through_two_agents(
    scratch: &Scratch,
    times: usize,
    tool: &'static str,
    arguments: impl Fn(usize) -> String,
) -> usize {
    let other = Project::new(
        fs::File::open(scratch.root()).unwrap(),
        scratch.project.limits().to_owned(),
    );
    let calls: Vec<_> = (0..times)
        .map(|index| {
            let project = if index % 2 == 0 {
                scratch.project.clone()
            } else {
                other.clone()
            };
            let arguments = arguments(index);
            tokio::spawn(async move { call(&project, tool, &arguments).await })
        })
        .collect();
    let mut succeeded = 0;
    for call in calls {
        succeeded += usize::from(call.await.unwrap().is_ok());
    }
    succeeded
}

/// The built-ins the crate links, by name, to check that a corpus covers every one.
pub fn linked_builtins() -> Vec<&'static str> {
    let mut names: Vec<&str> = linked_tools()
        .filter(|descriptor| (descriptor.plugin)().namespace == "builtin")
        .map(|descriptor| descriptor.name)
        .collect();
    names.sort_unstable();
    names
}

fn snapshot(base: &Path, dir: &Path, seen: &mut BTreeMap<PathBuf, String>, skip: Option<&Path>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if Some(path.as_path()) == skip {
            continue;
        }
        let meta = fs::symlink_metadata(&path).unwrap();
        let what = if meta.is_symlink() {
            format!("symlink to {}", fs::read_link(&path).unwrap().display())
        } else if meta.is_dir() {
            snapshot(base, &path, seen, skip);
            "directory".to_owned()
        } else {
            format!("file: {:?}", fs::read(&path).unwrap())
        };
        seen.insert(path.strip_prefix(base).unwrap().to_owned(), what);
    }
}
