//! External tools: declared by files in a directory (a command manifest, an MCP server),
//! not linked, and replaced while the engine runs.
//!
//! A loader (the `engine-extensions` crate) reads the directory and hands the engine what
//! each file gave; [`Engine::install_extensions`] checks it against what is linked and
//! swaps it in whole. A call or a turn reads the set once and keeps it: calls in flight
//! finish on the set they started with, the next ones see the new one.

mod catalog;
mod set;
mod tool;

use std::sync::Arc;

use arc_swap::ArcSwap;
use plugin_sdk::engine::Redact as _;
use tokio::sync::watch;

pub use set::{ExtensionFile, ExtensionKind, FileState, Installed, LoadedFile};
pub use tool::{ExternalTool, ExternalToolSpec, RunError, Runner};

use crate::config::AgentConfig;
use crate::dispatch::{self, Bounds, CallError, CallErrorKind};
use crate::engine::Engine;

/// The external tools of one configuration of the engine's agents: the installed set,
/// swapped whole (a reload makes a new one, with the same set equipped by the new agents).
pub(crate) struct Extensions {
    current: ArcSwap<Installed>,
}

impl Extensions {
    /// `installed`, equipped as the agents configured `agents` equip it.
    pub(crate) fn new<'a>(
        installed: &Installed,
        agents: impl IntoIterator<Item = &'a AgentConfig>,
    ) -> Self {
        Self {
            current: ArcSwap::from_pointee(installed.equipped_by(agents)),
        }
    }

    /// Installs `installed`, equipped as the agents configured `agents` equip it.
    pub(crate) fn equip<'a>(
        &self,
        installed: &Installed,
        agents: impl IntoIterator<Item = &'a AgentConfig>,
    ) {
        self.current.store(Arc::new(installed.equipped_by(agents)));
    }

    /// The set installed now.
    pub(crate) fn current(&self) -> Arc<Installed> {
        self.current.load_full()
    }
}

impl Engine {
    /// Installs the external tools `files` gave, in place of those installed before: each
    /// file is checked against what is linked and the files before it (in path order),
    /// and one whose tool clashes, or that [`refuses_extension`](Self::refuses_extension)
    /// refuses, is skipped with its error. The next call, turn and
    /// catalog see the new set; calls in flight finish on the old one. Gives the files
    /// as installed, each with its state and error.
    ///
    /// A file that offered its tools before keeps them over a new file that clashes with
    /// it: dropping a file in never takes a working tool away. Errors are redacted of
    /// every configured secret (a server's message may quote one). Clients hear of the
    /// change ([`extensions_changed`](Self::extensions_changed)) only if what is offered
    /// changed.
    pub fn install_extensions(&self, mut files: Vec<LoadedFile>) -> Arc<Installed> {
        // A poisoned lock only means a reload panicked; what it guards was swapped whole.
        let _replacing = self
            .replacing
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let extensions = self.extensions_now();
        let redact = self.redact();
        for file in &mut files {
            if file.tools.is_ok() {
                if let Some(refused) = self.refuses_extension(&file.path, &file.runs) {
                    file.tools = Err(refused);
                }
            }
            if let Err(error) = &mut file.tools {
                *error = redact.redact(error).into_owned();
            }
            if let Some(degraded) = &mut file.degraded {
                *degraded = redact.redact(degraded).into_owned();
            }
        }
        let previous = extensions.current();
        let installed = Arc::new(Installed::check(files, self, &previous));
        for file in installed.files() {
            if let Some(error) = &file.error {
                tracing::warn!(file = %file.path.display(), state = file.state.as_str(), "extension: {error}");
            }
        }
        extensions.current.store(Arc::clone(&installed));
        if !installed.offers_the_same_as(&previous) {
            self.offers_changed
                .send_modify(|generation| *generation += 1);
        }
        installed
    }

    /// The external tools installed now, with every file's state and error.
    pub fn extensions(&self) -> Arc<Installed> {
        self.extensions_now().current()
    }

    /// The entries of the agent `agent`'s `external_tools` list that no installed file
    /// provides: a typo, or a file not there yet. `engine check` shows them.
    pub fn unprovided_external_tools(&self, agent: &str) -> Vec<String> {
        let Some(listed) = self
            .agent(agent)
            .and_then(|agent| agent.config().external_tools.clone())
        else {
            return Vec::new();
        };
        let installed = self.extensions();
        listed
            .into_iter()
            .filter(|entry| {
                !installed
                    .tools()
                    .iter()
                    .any(|tool| set::enables(entry, tool))
            })
            .collect()
    }

    /// A receiver that changes each time what an agent is offered may have changed: a set
    /// of external tools that offers something else was installed, or the configuration
    /// was reloaded.
    pub fn extensions_changed(&self) -> watch::Receiver<u64> {
        self.offers_changed.subscribe()
    }
}

/// Runs an external tool under the same checks, deadline and cancellation as a linked
/// one, with its errors in the same shapes.
pub(crate) async fn call(
    tool: Arc<ExternalTool>,
    arguments: &str,
    bounds: Bounds<'_>,
) -> Result<String, CallError> {
    dispatch::admit(&*tool, arguments, &bounds)?;
    let running = tool.runner().run(arguments);
    match dispatch::wait(&*tool, running, &bounds).await? {
        Ok(output) => Ok(output),
        Err(RunError::InvalidArguments(message)) => {
            Err(CallError::new(CallErrorKind::InvalidArguments, message))
        }
        Err(RunError::Failed(message)) => Err(CallError::new(CallErrorKind::Failed, message)),
        Err(RunError::Output(message)) => Err(CallError::new(CallErrorKind::Output, message)),
        Err(RunError::TimedOut(message)) => Err(CallError::new(CallErrorKind::TimedOut, message)),
    }
}
