//! External tools and drop-in providers for an engine: files in a directory (`tools.d/`
//! beside the configuration by default), each a command tool or an MCP server, and in a
//! second one (`providers.d/`), each a model provider; read into the engine at start-up
//! and again whenever a directory changes or the process gets `SIGHUP`.
//!
//! ```no_run
//! # async fn run(config: engine_core::config::EngineConfig) -> Result<(), engine_core::EngineError> {
//! use std::sync::Arc;
//! let engine = Arc::new(
//!     engine_core::Engine::builder()
//!         .provider_files(engine_extensions::read_providers(&config))
//!         .config(config.clone())
//!         .build()?,
//! );
//! if let Some(loader) = engine_extensions::Loader::new(&config) {
//!     engine.install_extensions(loader.load(&engine).await);
//!     let _watching = engine_extensions::watch(engine, loader); // until dropped
//! }
//! # Ok(()) }
//! ```
//!
//! A file that does not parse, whose schema is invalid, or whose tool clashes is skipped
//! with its error, which [`Engine::extensions`](engine_core::Engine::extensions) gives;
//! the other files load. See the repository's README for the two file formats.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod arguments;
mod command;
/// Drop-in tools in `tools.d/` and providers in `providers.d/`, for the people who write
/// and install them.
#[doc = include_str!("../docs/external-tools.md")]
pub mod guide {}
mod manifest;
mod mcp;
mod providers;
mod watch;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

use engine_core::config::{EngineConfig, DEFAULT_MAX_OUTPUT_BYTES};
use engine_core::external::{ExtensionKind, ExternalTool, ExternalToolSpec, LoadedFile};
use engine_core::Engine;

pub use command::CONVERSATION_VARIABLE;
pub use manifest::{DEFAULT_NAMESPACE, DEFAULT_TIMEOUT};
pub use mcp::CONVERSATION_META_KEY;
pub use providers::read_providers;
pub use watch::{watch, Watching};

use arguments::Arguments;
use command::CommandRunner;
use manifest::{CommandManifest, Manifest, McpManifest, McpTransport};
use mcp::{Endpoint, McpServer};

/// Reads the extensions directory into what [`Engine::install_extensions`] takes, and
/// keeps the MCP servers it connected to from one read to the next (a server whose file
/// is unchanged keeps its connection; one whose file changed or went is stopped).
///
/// [`Engine::install_extensions`]: engine_core::Engine::install_extensions
pub struct Loader {
    dir: PathBuf,
    /// The providers directory, read beside the tools ([`read_providers`]).
    providers_dir: Option<PathBuf>,
    max_output: usize,
    secrets: BTreeMap<String, String>,
    /// The servers of the last read, by file, with what they were started from.
    servers: Mutex<HashMap<PathBuf, McpServer>>,
    /// Told when a server's tools or state change; [`watch`] then reads the directory
    /// again.
    changed: Arc<Mutex<Option<mpsc::UnboundedSender<()>>>>,
}

impl Loader {
    /// The loader of `config`'s extensions directory, if it has one (see
    /// [`EngineConfig::extensions_dir`]).
    pub fn new(config: &EngineConfig) -> Option<Self> {
        Some(Self {
            dir: config.extensions_dir()?,
            providers_dir: config.providers_dir(),
            max_output: config
                .extensions
                .max_output_bytes
                .unwrap_or(DEFAULT_MAX_OUTPUT_BYTES),
            secrets: config.extensions.secrets.clone(),
            servers: Mutex::default(),
            changed: Arc::default(),
        })
    }

    /// The directory it reads.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The providers directory, which [`watch`] watches beside it.
    pub fn providers_dir(&self) -> Option<&Path> {
        self.providers_dir.as_deref()
    }

    /// Every `*.json` file of the directory (not those starting with `.`: editors'
    /// temporary files), each read into its tools or its error. A directory that does
    /// not exist has none. Connects to the MCP servers of new or changed files, waiting
    /// for each first answer a few seconds at most; needs a Tokio runtime, on which the
    /// connections stay.
    ///
    /// A file `engine` refuses to run (it, or the program it names, lies in a project
    /// root, where the model writes) is read but never started: its error says why.
    pub async fn load(&self, engine: &Engine) -> Vec<LoadedFile> {
        let mut before = std::mem::take(&mut *self.servers.lock().expect("never poisoned"));
        let mut kept = HashMap::new();
        let mut loaded = Vec::new();
        for path in self.files() {
            let manifest = manifest::read(&path);
            let dir = path.parent().unwrap_or(Path::new("."));
            let runs: Vec<PathBuf> = match &manifest {
                Ok(Manifest::Command(command)) => command::named_files(&command.command, dir),
                Ok(Manifest::McpServer(McpManifest {
                    mcp_server: McpTransport::Stdio { command },
                    ..
                })) => command::named_files(command, dir),
                _ => Vec::new(),
            };
            let refused = engine.refuses_extension(&path, &runs);
            let (kind, tools, degraded) = match (manifest, refused) {
                (Err(error), _) => (
                    ExtensionKind::Unknown,
                    Err(format!("the file {error}")),
                    None,
                ),
                (Ok(Manifest::Command(_)), Some(refused)) => {
                    (ExtensionKind::Command, Err(refused), None)
                }
                (Ok(Manifest::McpServer(_)), Some(refused)) => {
                    (ExtensionKind::McpServer, Err(refused), None)
                }
                (Ok(Manifest::Command(command)), None) => (
                    ExtensionKind::Command,
                    self.command_tool(&path, command),
                    None,
                ),
                (Ok(Manifest::McpServer(server)), None) => {
                    match self.server(&path, server, &mut before).await {
                        Err(error) => (ExtensionKind::McpServer, Err(error), None),
                        Ok(server) => {
                            let tools = server.tools();
                            kept.insert(path.clone(), server);
                            match tools {
                                Ok((tools, degraded)) => {
                                    (ExtensionKind::McpServer, Ok(tools), degraded)
                                }
                                Err(error) => (ExtensionKind::McpServer, Err(error), None),
                            }
                        }
                    }
                }
            };
            loaded.push(LoadedFile {
                path,
                kind,
                tools,
                degraded,
                runs,
            });
        }
        // Servers whose file changed or went are dropped here, which stops them.
        *self.servers.lock().expect("never poisoned") = kept;
        loaded
    }

    /// The server the file at `path` describes: the one started before if the file
    /// still says the same, else a new one.
    async fn server(
        &self,
        path: &Path,
        manifest: McpManifest,
        before: &mut HashMap<PathBuf, McpServer>,
    ) -> Result<McpServer, String> {
        let endpoint = match manifest.mcp_server {
            McpTransport::Stdio { command } => mcp::stdio_endpoint(&command, path),
            McpTransport::Http { url, token_secret } => {
                let token = match token_secret {
                    None => None,
                    Some(key) => Some(self.secrets.get(&key).cloned().ok_or_else(|| {
                        format!("`token_secret` names `{key}`, which `[extensions.secrets]` does not have: add it to the configuration")
                    })?),
                };
                Endpoint::Http { url, token }
            }
        };
        let knows_conversation = manifest::knows_conversation(&manifest.context);
        if let Some(server) = before.remove(path) {
            if server.is_for(&manifest.namespace, &endpoint, knows_conversation) {
                return Ok(server);
            }
        }
        let changed = Arc::clone(&self.changed);
        let server = McpServer::start(
            manifest.namespace,
            path.to_owned(),
            endpoint,
            self.max_output,
            knows_conversation,
            Arc::new(move || {
                if let Some(reload) = &*changed.lock().expect("never poisoned") {
                    let _ = reload.send(());
                }
            }),
        )
        .await;
        Ok(server)
    }

    /// Where [`watch`] hears of a server's changes.
    fn on_change(&self, reload: mpsc::UnboundedSender<()>) {
        *self.changed.lock().expect("never poisoned") = Some(reload);
    }

    /// The extension files, in path order.
    fn files(&self) -> Vec<PathBuf> {
        extension_files(&self.dir)
    }

    /// The tool a command manifest describes.
    fn command_tool(
        &self,
        path: &Path,
        command: CommandManifest,
    ) -> Result<Vec<ExternalTool>, String> {
        let arguments = Arguments::new(&command.input_schema)?;
        let namespace = command
            .namespace
            .clone()
            .unwrap_or_else(|| DEFAULT_NAMESPACE.to_owned());
        let dir = path.parent().unwrap_or(Path::new("."));
        let runner = CommandRunner::new(
            format!("{namespace}:{}", command.name),
            &command.command,
            dir,
            command.timeout(),
            self.max_output,
            arguments,
        );
        let spec = ExternalToolSpec {
            namespace,
            name: command.name,
            description: command.description,
            summary: command.summary,
            category: command.category,
            input_schema: command.input_schema,
            knows_conversation: manifest::knows_conversation(&command.context),
        };
        Ok(vec![ExternalTool::new(
            spec,
            path.to_owned(),
            Arc::new(runner),
        )
        .map_err(|error| error.to_string())?])
    }
}

/// The extension files of `dir` (tools' or providers'), regular files only, in path
/// order; none when it does not exist.
fn extension_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| is_extension_file(path) && path.is_file())
        .collect();
    files.sort();
    files
}

/// Whether `path` names an extension file: `*.json`, not hidden.
fn is_extension_file(path: &Path) -> bool {
    let name = path
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or("");
    !name.starts_with('.') && name.ends_with(".json")
}
