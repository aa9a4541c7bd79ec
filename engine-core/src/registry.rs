//! Every plugin and tool linked into the binary, validated, sorted and indexed once.

use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use plugin_sdk::schema::Violation;
use plugin_sdk::{HookDescriptor, PluginManifest, ToolDescriptor};
use rustc_hash::FxHashMap;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::catalog::{gemini, Catalogs};
use crate::hooks::{Hook, Hooks};
use crate::parallel;
use crate::validate::{self, StartupError};
use crate::wire;

/// What a binary linked, before any check: the raw registrations.
///
/// [`Linked::from_inventory`] is what an engine uses; tests and benchmarks build one by
/// hand to start a registry on tools of their choosing.
#[derive(Clone, Default)]
pub struct Linked {
    /// Plugin manifests, in any order.
    pub plugins: Vec<&'static PluginManifest>,
    /// Tool descriptors, in any order. A tool whose manifest is missing from `plugins`
    /// brings it along.
    pub tools: Vec<&'static ToolDescriptor>,
    /// Hook descriptors, in any order; like tools, they bring their manifests along.
    pub hooks: Vec<&'static HookDescriptor>,
}

impl Linked {
    /// Everything `inventory` registered at link time.
    pub fn from_inventory() -> Self {
        Self {
            plugins: plugin_sdk::linked_plugins().collect(),
            tools: plugin_sdk::linked_tools().collect(),
            hooks: plugin_sdk::linked_hooks().collect(),
        }
    }
}

/// A linked tool with what start-up worked out for it: ids and schemas, built once.
pub struct Tool {
    descriptor: &'static ToolDescriptor,
    plugin: &'static PluginManifest,
    id: String,
    /// The id again, shared with each call's audit logger without a copy.
    audit_source: Arc<str>,
    wire_name: String,
    input_schema: Value,
    output_schema: Value,
    /// The schemas as JSON text, serialized once: every catalog embeds the same text.
    input_json: Box<RawValue>,
    output_json: Box<RawValue>,
    /// What the strict re-check found (nothing for a tool marked `strict = false`).
    strict_violations: Vec<Violation>,
    /// The Gemini declaration as JSON text, or why Gemini cannot take the schema.
    gemini_declaration: Result<Box<RawValue>, String>,
}

impl Tool {
    /// Everything start-up works out for one tool, in one pass while its schema is in
    /// cache: the schemas and their text, the strict re-check, the Gemini declaration.
    fn new(descriptor: &'static ToolDescriptor) -> Self {
        let plugin = (descriptor.plugin)();
        let input_schema = (descriptor.input_schema)().to_value();
        let output_schema = (descriptor.output_schema)().to_value();
        let wire_name = wire::wire_name(plugin.namespace, descriptor.name);
        let strict_violations = if descriptor.strict {
            plugin_sdk::schema::check_strict(&input_schema)
        } else {
            Vec::new()
        };
        let gemini_declaration =
            gemini::declaration(&wire_name, descriptor.description, &input_schema);
        Self {
            descriptor,
            plugin,
            id: descriptor.id(),
            audit_source: descriptor.id().into(),
            wire_name,
            input_json: raw_json(&input_schema),
            output_json: raw_json(&output_schema),
            strict_violations,
            gemini_declaration,
            input_schema,
            output_schema,
        }
    }

    /// What `#[define_tool]` registered.
    pub fn descriptor(&self) -> &'static ToolDescriptor {
        self.descriptor
    }

    /// The plugin that defines the tool.
    pub fn plugin(&self) -> &'static PluginManifest {
        self.plugin
    }

    /// The canonical id, `<namespace>:<name>`.
    pub fn id(&self) -> &str {
        &self.id
    }

    pub(crate) fn audit_source(&self) -> Arc<str> {
        Arc::clone(&self.audit_source)
    }

    /// The name every catalog gives the tool (see [`wire`]).
    pub fn wire_name(&self) -> &str {
        &self.wire_name
    }

    /// The JSON Schema of the arguments.
    pub fn input_schema(&self) -> &Value {
        &self.input_schema
    }

    /// The JSON Schema of the output.
    pub fn output_schema(&self) -> &Value {
        &self.output_schema
    }

    pub(crate) fn input_json(&self) -> &RawValue {
        &self.input_json
    }

    pub(crate) fn output_json(&self) -> &RawValue {
        &self.output_json
    }

    pub(crate) fn strict_violations(&self) -> &[Violation] {
        &self.strict_violations
    }

    pub(crate) fn gemini_declaration(&self) -> Result<&RawValue, &str> {
        match &self.gemini_declaration {
            Ok(declaration) => Ok(declaration),
            Err(reason) => Err(reason),
        }
    }
}

fn raw_json(schema: &Value) -> Box<RawValue> {
    serde_json::value::to_raw_value(schema).expect("a JSON value always serializes")
}

/// A plugin and the range of [`Registry::tools`] it defines.
struct PluginSlot {
    manifest: &'static PluginManifest,
    tools: Range<usize>,
}

/// Limits a registry applies to every call and every turn.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// How long a call may run when the caller sets no deadline.
    pub default_timeout: Duration,
    /// The largest arguments text accepted, in bytes; larger ones are refused unread.
    pub max_argument_bytes: usize,
    /// How many times hooks may replay one turn; past it the engine keeps the last reply.
    pub max_regenerations: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            default_timeout: Duration::from_secs(30),
            max_argument_bytes: 1 << 20,
            max_regenerations: 2,
        }
    }
}

/// The validated set of plugins and tools an engine serves.
///
/// Built once at start-up: everything is sorted (link order depends on the linker),
/// checked, indexed by id and wire name, and the provider catalogs are rendered to bytes.
/// A registry exists only if every check passed.
pub struct Registry {
    plugins: Vec<PluginSlot>,
    tools: Vec<Tool>,
    /// Ids and wire names. Fx rather than SipHash: the keys are fixed at start-up, so a
    /// caller choosing the names it looks up cannot lengthen any chain, and every call
    /// hashes one.
    by_name: FxHashMap<Box<str>, usize>,
    pub(crate) hooks: Hooks,
    pub(crate) catalogs: Catalogs,
    pub(crate) limits: Limits,
}

impl Registry {
    /// Collects what this binary linked and validates it; the engine's start-up.
    pub fn linked() -> Result<Self, StartupError> {
        Self::build(Linked::from_inventory())
    }

    /// [`Registry::linked`] for an engine's `main`: on any problem, prints the report to
    /// stderr and exits with status 1, before anything is served.
    pub fn linked_or_exit() -> Self {
        Self::linked().unwrap_or_else(|error| {
            eprint!("{error}");
            std::process::exit(1)
        })
    }

    /// Validates `linked` and builds a registry, or reports every problem found.
    pub fn build(linked: Linked) -> Result<Self, StartupError> {
        let (plugins, tools, hooks) = sort(linked);
        let mut problems = validate::validate(&plugins, &tools, &hooks);
        let catalogs = Catalogs::render(&tools.iter().collect::<Vec<_>>(), &mut problems);
        if !problems.is_empty() {
            return Err(StartupError::new(problems));
        }
        let mut by_name = FxHashMap::with_capacity_and_hasher(tools.len() * 2, Default::default());
        for (index, tool) in tools.iter().enumerate() {
            by_name.insert(tool.id.clone().into_boxed_str(), index);
            by_name.insert(tool.wire_name.clone().into_boxed_str(), index);
        }
        let plugins = plugins
            .into_iter()
            .map(|manifest| {
                let start = tools.partition_point(|tool| {
                    (tool.plugin.namespace, tool.plugin.package)
                        < (manifest.namespace, manifest.package)
                });
                let end = start
                    + tools[start..]
                        .iter()
                        .take_while(|tool| std::ptr::eq(tool.plugin, manifest))
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
            catalogs,
            limits: Limits::default(),
        })
    }

    /// The same registry with other call limits.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The plugins, sorted by namespace, each with its tools sorted by name.
    pub fn plugins(&self) -> impl Iterator<Item = (&'static PluginManifest, &[Tool])> {
        self.plugins
            .iter()
            .map(|slot| (slot.manifest, &self.tools[slot.tools.clone()]))
    }

    /// Every tool, sorted by id.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The hooks, by event, in the order they run.
    pub fn hooks(&self) -> &Hooks {
        &self.hooks
    }

    /// The tool called `name`, by canonical id (`acme:book_appointment`) or wire name
    /// (`acme__book_appointment`).
    #[inline]
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.tool_index(name).map(|index| &self.tools[index])
    }

    /// The index in [`Registry::tools`] of the tool called `name`.
    #[inline]
    pub(crate) fn tool_index(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }
}

/// Pairs tools and hooks with their manifests and sorts all three, duplicates included,
/// so that every listing and every report is the same from one build to the next.
fn sort(linked: Linked) -> (Vec<&'static PluginManifest>, Vec<Tool>, Vec<Hook>) {
    let mut plugins = linked.plugins;
    let mut tools: Vec<Tool> = parallel::map(&linked.tools, |descriptor| Tool::new(descriptor));
    let mut hooks: Vec<Hook> = linked.hooks.into_iter().map(Hook::new).collect();
    let owners = tools
        .iter()
        .map(|tool| tool.plugin)
        .chain(hooks.iter().map(Hook::plugin));
    for owner in owners {
        if !plugins.iter().any(|known| std::ptr::eq(*known, owner)) {
            plugins.push(owner);
        }
    }
    plugins.sort_by_key(|plugin| (plugin.namespace, plugin.package));
    plugins.dedup_by(|a, b| std::ptr::eq(*a, *b));
    tools.sort_by_key(|tool| {
        let at = tool.descriptor.location;
        (
            tool.plugin.namespace,
            tool.plugin.package,
            tool.descriptor.name,
            at.file,
            at.line,
        )
    });
    hooks.sort_by(|a, b| {
        let (at_a, at_b) = (a.descriptor().location, b.descriptor().location);
        (a.id(), at_a.file, at_a.line).cmp(&(b.id(), at_b.file, at_b.line))
    });
    (plugins, tools, hooks)
}
