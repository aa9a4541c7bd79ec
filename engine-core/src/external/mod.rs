//! External tools: declared by files in a directory (a command manifest, an MCP server),
//! not linked, and replaced while the engine runs.
//!
//! A loader (the `engine-extensions` crate) reads the directory and hands the engine what
//! each file gave; [`Engine::install_extensions`](crate::Engine::install_extensions) checks it against what is linked and
//! swaps it in whole. A call or a turn reads the set once and keeps it: calls in flight
//! finish on the set they started with, the next ones see the new one.

mod set;
mod tool;

use std::sync::Arc;

use arc_swap::ArcSwap;

pub(crate) use set::enables;
pub use set::{ExtensionFile, ExtensionKind, FileState, Installed, LoadedFile};
pub use tool::{Declared, ExternalTool, ExternalToolSpec, InvalidTool, RunError, Runner};

use crate::config::AgentConfig;
use crate::dispatch::{self, Bounds, CallError, CallErrorKind};

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

    /// Installs `installed` as it is.
    pub(crate) fn install(&self, installed: Arc<Installed>) {
        self.current.store(installed);
    }
}

impl dispatch::Called for ExternalTool {
    fn id(&self) -> &str {
        Declared::id(self)
    }

    fn wire_name(&self) -> &str {
        Declared::wire_name(self)
    }
}

/// Runs an external tool under the same checks, deadline and cancellation as a linked
/// one, with its errors in the same shapes. The call's `conversation` reaches the tool
/// only if it opted in to know it.
pub(crate) async fn call(
    tool: Arc<ExternalTool>,
    arguments: &str,
    conversation: Option<&str>,
    bounds: Bounds<'_>,
) -> Result<String, CallError> {
    dispatch::admit(&*tool, arguments, &bounds)?;
    let conversation = conversation.filter(|_| tool.knows_conversation());
    let running = tool.runner().run(arguments, conversation);
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
