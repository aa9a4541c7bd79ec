//! The engine's external tools: installing what a loader read from `tools.d`, checked
//! against what is linked, and what is installed now.

use std::sync::Arc;

use plugin_sdk::engine::Redact as _;

use super::{project_roots, Engine};
use crate::external::{self, Installed, LoadedFile};

/// The install of [`Engine::install_extensions`].
pub(super) fn install(engine: &Engine, mut files: Vec<LoadedFile>) -> Arc<Installed> {
    // A poisoned lock only means a reload panicked; what it guards was swapped whole.
    let _replacing = engine
        .replacing
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let extensions = engine.extensions_now();
    let redact = engine.redact();
    let config = &engine.configured.load().config;
    for file in &mut files {
        if file.tools.is_ok() {
            if let Some(refused) = project_roots::in_a_root(config, &file.path, &file.runs) {
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
    let agents = engine.agents();
    let installed = Arc::new(Installed::check(
        files,
        &engine.runtime.registry,
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
        engine
            .offers_changed
            .send_modify(|generation| *generation += 1);
    }
    installed
}

/// The entries of the agent `agent`'s `external_tools` list that no installed file
/// provides (see [`Engine::unprovided_external_tools`]).
pub(super) fn unprovided(engine: &Engine, agent: &str) -> Vec<String> {
    let Some(listed) = engine
        .agent(agent)
        .and_then(|agent| agent.config().external_tools.clone())
    else {
        return Vec::new();
    };
    let installed = engine.extensions();
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
