//! The engine's external tools: installing what a loader read from `tools.d`, checked
//! against what is linked, and what is installed now.

use std::sync::Arc;

use plugin_sdk::engine::Redact as _;
use tokio::sync::watch;

use super::Engine;
use crate::external::{self, Installed, LoadedFile};

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
        let agents = self.agents();
        let installed = Arc::new(Installed::check(
            files,
            &self.registry,
            agents.iter().map(|agent| agent.config()),
            &previous,
        ));
        for file in installed.files() {
            if let Some(error) = &file.error {
                tracing::warn!(file = %file.path.display(), state = file.state.as_str(), "extension: {error}");
            }
        }
        extensions.install(Arc::clone(&installed));
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
                    .any(|tool| external::enables(entry, tool))
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
