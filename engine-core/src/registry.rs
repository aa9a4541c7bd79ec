//! Every plugin and tool linked into the binary, in a deterministic order.

use plugin_sdk::{PluginManifest, ToolDescriptor};

/// A plugin and the tools it defines, sorted by name.
pub struct PluginTools {
    /// The plugin's manifest.
    pub plugin: &'static PluginManifest,
    /// Its tools.
    pub tools: Vec<&'static ToolDescriptor>,
}

/// What this binary linked: plugins sorted by namespace, each with its tools.
///
/// Link order depends on the linker, so everything is sorted once here and every
/// listing the engine shows is the same from one build to the next.
pub struct Registry {
    plugins: Vec<PluginTools>,
}

impl Registry {
    /// Collects the plugins and tools that `inventory` registered at link time.
    pub fn linked() -> Self {
        let mut plugins: Vec<PluginTools> = plugin_sdk::linked_plugins()
            .map(|plugin| PluginTools {
                plugin,
                tools: Vec::new(),
            })
            .collect();
        for tool in plugin_sdk::linked_tools() {
            let owner = (tool.plugin)();
            // `plugin!` submits the manifest its tools point at, so the owner is always
            // listed; a tool is never dropped even if that ever changed.
            match plugins
                .iter_mut()
                .find(|entry| std::ptr::eq(entry.plugin, owner))
            {
                Some(entry) => entry.tools.push(tool),
                None => plugins.push(PluginTools {
                    plugin: owner,
                    tools: vec![tool],
                }),
            }
        }
        plugins.sort_by_key(|entry| entry.plugin.namespace);
        for entry in &mut plugins {
            entry.tools.sort_by_key(|tool| tool.name);
        }
        Self { plugins }
    }

    /// The plugins, sorted by namespace, each with its tools sorted by name.
    pub fn plugins(&self) -> &[PluginTools] {
        &self.plugins
    }
}
