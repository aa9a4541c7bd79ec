//! Every plugin and tool linked into the binary, validated, sorted and indexed once.

use std::ops::Range;
use std::sync::Arc;

use plugin_sdk::channel::ChannelDescriptor;
use plugin_sdk::engine::{HookDescriptor, PluginManifest, ToolDescriptor};
use rustc_hash::FxHashMap;

use crate::catalog::Catalogs;
use crate::hooks::{Hook, Hooks};
use crate::limits::Limits;
use crate::parallel;
use crate::tool::Tool;
use crate::validate::{self, StartupError};

/// What a binary linked (or a builder chose), before any check: the raw registrations.
#[derive(Clone)]
pub(crate) struct Linked {
    /// Plugin manifests, in any order.
    pub(crate) plugins: Vec<&'static PluginManifest>,
    /// Tool descriptors, in any order. A tool brings its plugin's manifest along.
    pub(crate) tools: Vec<&'static ToolDescriptor>,
    /// Hook descriptors, in any order; like tools, they bring their manifests along.
    pub(crate) hooks: Vec<&'static HookDescriptor>,
    /// Channel descriptors, in any order; they bring their manifests along too.
    pub(crate) channels: Vec<&'static ChannelDescriptor>,
}

impl Linked {
    /// Everything `inventory` registered at link time, but `tools` or `hooks` when chosen;
    /// the plugins are then those the chosen registrations bring along, and no channel.
    pub(crate) fn choose(
        tools: Option<Vec<&'static ToolDescriptor>>,
        hooks: Option<Vec<&'static HookDescriptor>>,
    ) -> Self {
        let everything = tools.is_none() && hooks.is_none();
        Self {
            plugins: if everything {
                plugin_sdk::engine::linked_plugins().collect()
            } else {
                Vec::new()
            },
            tools: tools.unwrap_or_else(|| plugin_sdk::engine::linked_tools().collect()),
            hooks: hooks.unwrap_or_else(|| plugin_sdk::engine::linked_hooks().collect()),
            channels: if everything {
                plugin_sdk::channel::linked_channels().collect()
            } else {
                Vec::new()
            },
        }
    }
}

/// A plugin and the range of [`Registry::tools`] it defines.
struct PluginSlot {
    manifest: &'static PluginManifest,
    tools: Range<usize>,
}

/// The validated set of plugins, tools and hooks an engine serves.
///
/// Built once at start-up: everything is sorted (link order depends on the linker),
/// checked, and indexed by id and wire name; the provider catalogs are rendered on first
/// use.
/// A registry exists only if every check passed.
pub(crate) struct Registry {
    plugins: Vec<PluginSlot>,
    tools: Vec<Tool>,
    /// Ids and wire names. Fx rather than SipHash: the keys are fixed at start-up, so a
    /// caller choosing the names it looks up cannot lengthen any chain, and every call
    /// hashes one.
    by_name: FxHashMap<Box<str>, usize>,
    pub(crate) hooks: Hooks,
    /// The channels, sorted by name.
    pub(crate) channels: Vec<&'static ChannelDescriptor>,
    pub(crate) catalogs: Arc<Catalogs>,
    pub(crate) limits: Limits,
}

impl Registry {
    /// Validates `linked` and builds a registry, or reports every problem found.
    pub(crate) fn build(linked: Linked, limits: Limits) -> Result<Self, StartupError> {
        let (plugins, tools, hooks, channels) = sort(linked);
        let problems = validate::validate(&plugins, &tools, &hooks, &channels);
        if !problems.is_empty() {
            return Err(StartupError::new(problems));
        }
        let mut by_name = FxHashMap::with_capacity_and_hasher(tools.len() * 2, Default::default());
        for (index, tool) in tools.iter().enumerate() {
            by_name.insert(tool.id().into(), index);
            by_name.insert(tool.wire_name().into(), index);
        }
        let plugins = plugins
            .into_iter()
            .map(|manifest| {
                let start = tools.partition_point(|tool| {
                    (tool.plugin().namespace, tool.plugin().package)
                        < (manifest.namespace, manifest.package)
                });
                let end = start
                    + tools[start..]
                        .iter()
                        .take_while(|tool| std::ptr::eq(tool.plugin(), manifest))
                        .count();
                PluginSlot {
                    manifest,
                    tools: start..end,
                }
            })
            .collect();
        Ok(Self {
            plugins,
            tools,
            by_name,
            hooks: Hooks::new(hooks),
            channels,
            catalogs: Arc::default(),
            limits,
        })
    }

    /// The plugins, sorted by namespace, each with its tools sorted by name.
    pub(crate) fn plugins(&self) -> impl Iterator<Item = (&'static PluginManifest, &[Tool])> {
        self.plugins
            .iter()
            .map(|slot| (slot.manifest, &self.tools[slot.tools.clone()]))
    }

    /// Every tool, sorted by id.
    pub(crate) fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The index in [`Registry::tools`] of the tool called `name`, by canonical id
    /// (`acme:book_appointment`) or wire name (`acme__book_appointment`).
    #[inline]
    pub(crate) fn tool_index(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }
}

/// What [`sort`] gives: plugins, tools, hooks and channels, each sorted.
type Sorted = (
    Vec<&'static PluginManifest>,
    Vec<Tool>,
    Vec<Hook>,
    Vec<&'static ChannelDescriptor>,
);

/// Pairs tools, hooks and channels with their manifests and sorts them all, duplicates
/// included, so that every listing and every report is the same from one build to the
/// next.
fn sort(linked: Linked) -> Sorted {
    let mut plugins = linked.plugins;
    let mut tools: Vec<Tool> = parallel::map(&linked.tools, |descriptor| Tool::new(descriptor));
    let mut hooks: Vec<Hook> = linked.hooks.into_iter().map(Hook::new).collect();
    let mut channels = linked.channels;
    let owners = tools
        .iter()
        .map(Tool::plugin)
        .chain(hooks.iter().map(Hook::plugin))
        .chain(channels.iter().map(|channel| (channel.plugin)()));
    for owner in owners {
        if !plugins.iter().any(|known| std::ptr::eq(*known, owner)) {
            plugins.push(owner);
        }
    }
    plugins.sort_by_key(|plugin| (plugin.namespace, plugin.package));
    plugins.dedup_by(|a, b| std::ptr::eq(*a, *b));
    tools.sort_by_key(|tool| {
        let at = tool.descriptor().location;
        (
            tool.plugin().namespace,
            tool.plugin().package,
            tool.descriptor().name,
            at.file,
            at.line,
        )
    });
    hooks.sort_by(|a, b| {
        let (at_a, at_b) = (a.descriptor().location, b.descriptor().location);
        (a.id(), at_a.file, at_a.line).cmp(&(b.id(), at_b.file, at_b.line))
    });
    channels.sort_by_key(|channel| {
        let plugin = (channel.plugin)();
        (channel.name, plugin.namespace, plugin.package)
    });
    (plugins, tools, hooks, channels)
}
