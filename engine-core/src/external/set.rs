//! A set of external tools as installed: every file with its state, the tools of those
//! that passed, and what each agent equips of them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use serde::Serialize;

use super::tool::ExternalTool;
use crate::config::AgentConfig;
use crate::format::Format;
use crate::registry::Registry;
use crate::BUILTIN_TOOL_NAMES;

/// What kind of file declared the tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExtensionKind {
    /// A command that reads the arguments on stdin and writes the result on stdout.
    Command,
    /// An MCP server the engine is a client of.
    McpServer,
    /// A file that could not be read as either.
    Unknown,
}

impl ExtensionKind {
    /// The kind's name in listings and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Command => "command",
            Self::McpServer => "mcp_server",
            Self::Unknown => "unknown",
        }
    }
}

/// How a file stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileState {
    /// Its tools are offered.
    Loaded,
    /// Its tools are offered, but calls fail until it recovers (an MCP server being
    /// restarted): the error says why.
    Degraded,
    /// It offers nothing: the error says why.
    Skipped,
}

impl FileState {
    /// The state's name in listings and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Loaded => "loaded",
            Self::Degraded => "degraded",
            Self::Skipped => "skipped",
        }
    }
}

/// What a loader made of one file, before the engine checks it.
pub struct LoadedFile {
    /// The file.
    pub path: PathBuf,
    /// What kind of file it is.
    pub kind: ExtensionKind,
    /// Its tools, or why it gives none.
    pub tools: Result<Vec<ExternalTool>, String>,
    /// Why its tools fail for now, when they are offered all the same.
    pub degraded: Option<String>,
    /// The files its tools run or name (a command's program, wherever `PATH` may find
    /// it, and the paths its arguments name; an MCP stdio server's), as the loader found
    /// them: like the file itself, none may lie in a project root, where the model writes.
    pub runs: Vec<PathBuf>,
}

/// One file as installed: what `GET /v1/extensions` and `engine tools` show.
#[derive(Clone, Debug, Serialize)]
pub struct ExtensionFile {
    /// The file.
    pub path: PathBuf,
    /// What kind of file it is.
    pub kind: ExtensionKind,
    /// How it stands.
    pub state: FileState,
    /// Why it is skipped or degraded.
    pub error: Option<String>,
    /// The ids of the tools it offers.
    pub tools: Vec<String>,
    /// The programs its tools run (see [`LoadedFile::runs`]).
    #[serde(skip)]
    pub runs: Vec<PathBuf>,
}

/// What one agent equips of a set, and the catalogs with them, rendered on first use.
struct AgentExtras {
    /// By the set's index.
    equips: Vec<bool>,
    /// Indexes into the set's tools, in its order.
    tools: Vec<usize>,
    /// Catalogs with the external tools added, by format and by the linked rendering
    /// they extend (its address: one per locale's titles for MCP), which each entry holds
    /// so that the address cannot be reused by another rendering.
    catalogs: Mutex<HashMap<(Format, usize), (Bytes, Bytes)>>,
}

/// An installed set of external tools.
pub struct Installed {
    files: Vec<ExtensionFile>,
    /// Sorted by id.
    tools: Vec<Arc<ExternalTool>>,
    /// Ids and wire names.
    by_name: HashMap<Box<str>, usize>,
    /// By the engine's agent index.
    agents: Vec<AgentExtras>,
}

impl Installed {
    pub(crate) fn empty() -> Self {
        Self {
            files: Vec::new(),
            tools: Vec::new(),
            by_name: HashMap::new(),
            agents: Vec::new(),
        }
    }

    /// Checks `files` in path order against what `registry` links and the files before
    /// each: a file with a clash is skipped whole, with every clash in its error. Equipped
    /// as `agents` (in the engine's order) equip it.
    pub(crate) fn check<'a>(
        mut files: Vec<LoadedFile>,
        registry: &Registry,
        agents: impl IntoIterator<Item = &'a AgentConfig>,
        previous: &Installed,
    ) -> Self {
        // Files that offered tools before are checked first, so that a new file cannot
        // take an id from one that works; then path order.
        let offered_before = |path: &Path| {
            previous
                .files
                .iter()
                .any(|file| file.path == path && file.state != FileState::Skipped)
        };
        files.sort_by_cached_key(|file| (!offered_before(&file.path), file.path.clone()));
        let mut installed = Self::empty();
        let mut owners: HashMap<String, PathBuf> = HashMap::new();
        for file in files {
            let (state, error, tools) = match file.tools {
                Err(error) => (FileState::Skipped, Some(error), Vec::new()),
                Ok(tools) => {
                    let clashes = clashes(&tools, &file.path, registry, &owners);
                    if clashes.is_empty() {
                        match file.degraded {
                            Some(why) => (FileState::Degraded, Some(why), tools),
                            None => (FileState::Loaded, None, tools),
                        }
                    } else {
                        (FileState::Skipped, Some(clashes.join("; ")), Vec::new())
                    }
                }
            };
            for tool in &tools {
                owners.insert(tool.id().to_owned(), file.path.clone());
            }
            installed.files.push(ExtensionFile {
                path: file.path,
                kind: file.kind,
                state,
                error,
                tools: tools.iter().map(|tool| tool.id().to_owned()).collect(),
                runs: file.runs,
            });
            installed.tools.extend(tools.into_iter().map(Arc::new));
        }
        installed.files.sort_by(|a, b| a.path.cmp(&b.path));
        installed.tools.sort_by(|a, b| a.id().cmp(b.id()));
        for (index, tool) in installed.tools.iter().enumerate() {
            installed.by_name.insert(tool.id().into(), index);
            installed.by_name.insert(tool.wire_name().into(), index);
        }
        installed.agents = agents
            .into_iter()
            .map(|config| AgentExtras::of(config, &installed.tools))
            .collect();
        installed
    }

    /// The same set, equipped as the agents configured `agents` (in the engine's order)
    /// equip it: what a reload of the configuration installs.
    pub(super) fn equipped_by<'a>(
        &self,
        agents: impl IntoIterator<Item = &'a AgentConfig>,
    ) -> Self {
        Self {
            files: self.files.clone(),
            tools: self.tools.clone(),
            by_name: self.by_name.clone(),
            agents: agents
                .into_iter()
                .map(|config| AgentExtras::of(config, &self.tools))
                .collect(),
        }
    }

    /// Whether `other` offers what this set offers: the same files in the same states,
    /// and the same tools with the same names, texts and schemas.
    pub(crate) fn offers_the_same_as(&self, other: &Installed) -> bool {
        fn files(set: &Installed) -> Vec<(&PathBuf, FileState, &Option<String>, &Vec<String>)> {
            set.files
                .iter()
                .map(|file| (&file.path, file.state, &file.error, &file.tools))
                .collect()
        }
        fn tools(set: &Installed) -> Vec<(&str, &str, &str, &str)> {
            set.tools
                .iter()
                .map(|tool| {
                    (
                        tool.id(),
                        tool.description(),
                        tool.summary(),
                        tool.input_json().get(),
                    )
                })
                .collect()
        }
        files(self) == files(other) && tools(self) == tools(other)
    }

    /// Every file, in path order.
    pub fn files(&self) -> &[ExtensionFile] {
        &self.files
    }

    /// Every external tool offered, sorted by id.
    pub fn tools(&self) -> &[Arc<ExternalTool>] {
        &self.tools
    }

    /// The external tools the agent at `agent` (the engine's index) equips.
    pub(crate) fn equipped(&self, agent: usize) -> impl Iterator<Item = &Arc<ExternalTool>> {
        self.agents
            .get(agent)
            .into_iter()
            .flat_map(|extras| extras.tools.iter().map(|&index| &self.tools[index]))
    }

    /// The tool called `name` (id or wire name), if the agent at `agent` equips it.
    pub(crate) fn offered(&self, agent: usize, name: &str) -> Option<&Arc<ExternalTool>> {
        let index = *self.by_name.get(name)?;
        let extras = self.agents.get(agent)?;
        extras.equips[index].then(|| &self.tools[index])
    }

    /// `linked`, the agent's catalog of linked tools in `format`, with its external tools
    /// added.
    pub(crate) fn catalog(&self, agent: usize, format: Format, linked: Bytes) -> Bytes {
        let Some(extras) = self
            .agents
            .get(agent)
            .filter(|extras| !extras.tools.is_empty())
        else {
            return linked;
        };
        let key = (format, linked.as_ptr() as usize);
        // A poisoned lock only means another renderer panicked; the map is still whole.
        let mut cache = extras
            .catalogs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        cache
            .entry(key)
            .or_insert_with(|| {
                let entries: Vec<_> = extras
                    .tools
                    .iter()
                    .map(|&index| self.tools[index].catalog_entry())
                    .collect();
                let extended = crate::catalog::extend(format, &linked, &entries);
                (linked, extended)
            })
            .1
            .clone()
    }
}

impl AgentExtras {
    /// What an agent configured as `config` equips: those its `external_tools` list
    /// names, by id or by `<namespace>:*`; without that list, every external tool if it
    /// has no `tools` list either (as it then equips every linked tool), else none.
    fn of(config: &AgentConfig, tools: &[Arc<ExternalTool>]) -> Self {
        let equips: Vec<bool> = tools
            .iter()
            .map(|tool| match (&config.external_tools, &config.tools) {
                (Some(listed), _) => listed.iter().any(|entry| enables(entry, tool)),
                (None, None) => true,
                (None, Some(_)) => false,
            })
            .collect();
        Self {
            tools: (0..tools.len()).filter(|&index| equips[index]).collect(),
            equips,
            catalogs: Mutex::default(),
        }
    }
}

/// Whether an agent's `tools` entry names `tool`: its id, or `<namespace>:*`.
pub(crate) fn enables(entry: &str, tool: &ExternalTool) -> bool {
    entry == tool.id()
        || entry
            .strip_suffix(":*")
            .is_some_and(|namespace| namespace == tool.namespace())
}

/// Why the tools of the file at `path` cannot be installed beside what `registry` links
/// and the tools of earlier files (`owners`: id to file).
fn clashes(
    tools: &[ExternalTool],
    path: &Path,
    registry: &Registry,
    owners: &HashMap<String, PathBuf>,
) -> Vec<String> {
    let mut clashes = Vec::new();
    let mut linked_namespaces = Vec::new();
    for (at, tool) in tools.iter().enumerate() {
        if let Some((plugin, _)) = registry
            .plugins()
            .find(|(plugin, _)| plugin.namespace == tool.namespace())
        {
            // Said once for the file, not once per tool.
            if !linked_namespaces.contains(&plugin.namespace) {
                linked_namespaces.push(plugin.namespace);
                clashes.push(format!(
                    "the namespace `{}` belongs to the linked plugin `{}`; choose another",
                    tool.namespace(),
                    plugin.package
                ));
            }
        } else if BUILTIN_TOOL_NAMES.contains(&tool.name()) {
            clashes.push(format!(
                "`{}`: `{}` is the name of a built-in tool, and the model would see two; choose another name",
                tool.id(),
                tool.name()
            ));
        } else if let Some(owner) = owners.get(tool.id()).filter(|owner| *owner != path) {
            clashes.push(format!(
                "`{}` is already defined by {}; rename one of them",
                tool.id(),
                owner.display()
            ));
        } else if tools[..at].iter().any(|earlier| earlier.id() == tool.id()) {
            clashes.push(format!("`{}` is defined twice in this file", tool.id()));
        }
    }
    clashes
}
