//! An agent's own parts, made from its configuration at start-up and at each reload: its
//! plugins' states and its project root.

use std::collections::BTreeMap;

use plugin_sdk::project::Project;

use super::error::EngineError;
use super::linked_config;
use crate::agent::{Agent, AnyState};
use crate::config::{AgentConfig, ProjectConfig};
use crate::registry::Registry;

/// The state of each plugin the agent configures, built from its settings (which
/// [`linked_config`] checked); or, when the agent's configuration `before` a reload had
/// the same settings, its state then (a reload does not reconnect what is unchanged).
pub(super) fn build_plugin_states(
    name: &str,
    agent: &AgentConfig,
    registry: &Registry,
    before: Option<&Agent>,
) -> Result<BTreeMap<String, AnyState>, EngineError> {
    let mut states = BTreeMap::new();
    for (namespace, settings) in &agent.plugins {
        // A state may connect somewhere: none for a plugin whose tools the agent's list
        // leaves out.
        let enables_one = agent.tools.as_ref().is_none_or(|ids| {
            ids.iter()
                .any(|id| id.split_once(':').is_some_and(|(of, _)| of == namespace))
        });
        if !enables_one {
            continue;
        }
        let Some(builder) = registry
            .plugins()
            .find(|(plugin, _)| plugin.namespace == namespace)
            .and_then(|(plugin, _)| plugin.state)
        else {
            continue;
        };
        if let Some(state) = before.and_then(|before| before.plugin_state(namespace, settings)) {
            states.insert(namespace.clone(), state);
            continue;
        }
        // Checked: `linked_config` refuses settings that do not convert.
        let Ok(settings) = linked_config::settings_value(settings) else {
            continue;
        };
        let state = builder
            .build(settings)
            .map_err(|message| EngineError::PluginState {
                agent: name.to_owned(),
                namespace: namespace.clone(),
                message,
            })?;
        states.insert(namespace.clone(), state);
    }
    Ok(states)
}

/// Opens a project root (created by [`create_roots`](super::project_roots::create_roots)).
pub(super) fn open_project(config: &ProjectConfig) -> Result<Project, EngineError> {
    let failed = |source| EngineError::Project {
        root: config.root.clone(),
        source,
    };
    let root = std::fs::File::open(&config.root).map_err(failed)?;
    if !root.metadata().map_err(failed)?.is_dir() {
        return Err(failed(std::io::Error::new(
            std::io::ErrorKind::NotADirectory,
            "not a directory",
        )));
    }
    Ok(Project::new(root, config.limits()))
}
