//! The descriptor `#[define_tool]` registers: everything the engine needs about a tool.

use schemars::Schema;

use crate::context::{KnowledgeNeed, SecretSpec};
use crate::param::Needs;
use crate::{BoxFuture, CallInput, LocalizedText, PluginManifest, ToolError};

/// The type-erased entry of a tool: JSON arguments in, JSON output text out.
pub type CallFn = for<'a> fn(CallInput<'a>) -> BoxFuture<'a, Result<String, ToolError>>;

/// The entry of a tool whose body never suspends: JSON arguments in, JSON text out,
/// without a future.
pub type ReadyFn = for<'a> fn(CallInput<'a>) -> Result<String, ToolError>;

/// Checks the arguments of a staged action's call (JSON text) without running it.
pub type StageFn = fn(&str) -> Result<(), ToolError>;

/// A tool, as `#[define_tool]` registers it: a constant built at compile time.
///
/// Schemas are functions so that the engine builds each one once, at start-up.
pub struct ToolDescriptor {
    /// The tool's name within its plugin (`book_appointment`).
    pub name: &'static str,
    /// What the model reads: the function's doc comment, in English.
    pub description: &'static str,
    /// What people read; without it, the first line of the description.
    pub summary: Option<LocalizedText>,
    /// A grouping id (`crm`, `email`), not text.
    pub category: Option<&'static str>,
    /// Hints for clients (MCP tool annotations).
    pub annotations: ToolAnnotations,
    /// Whether the arguments schema is strict; `false` only with `strict = false`.
    pub strict: bool,
    /// Whether a call of it runs alone in its turn's step (`exclusive`): the calls before
    /// it finish first, and those after it wait for it.
    pub exclusive: bool,
    /// For a staged action (`#[define_action]`), what checks a call's arguments: the call
    /// stages the action, and `entry` performs it after the turn's reply and its
    /// guardrails. `None` for a tool, which runs when called.
    pub staged: Option<StageFn>,
    /// Example arguments, as compact JSON text, each checked by a generated unit test.
    pub examples: &'static [&'static str],
    /// The manifest of the plugin that defines the tool.
    pub plugin: fn() -> &'static PluginManifest,
    /// The JSON Schema of the arguments.
    pub input_schema: fn() -> Schema,
    /// The JSON Schema of the output.
    pub output_schema: fn() -> Schema,
    /// Runs the tool.
    pub entry: ToolEntry,
    /// The secrets its parameters declare, by parameter.
    pub secrets: &'static [&'static [SecretSpec]],
    /// What else of the context its parameters read.
    pub needs: Needs,
    /// The knowledge level its knowledge extractor needs, if it has one.
    pub knowledge: Option<KnowledgeNeed>,
    /// Where the tool is defined, for messages at start-up.
    pub location: SourceLocation,
}

/// How a tool runs: at once, or as a future.
///
/// `#[define_tool]` picks `Ready` for a body without `.await` (and without a macro that
/// could hide one): such a body cannot suspend, so it needs no future, no box and no
/// timer.
#[derive(Clone, Copy)]
pub enum ToolEntry {
    /// A body that cannot suspend, run to completion.
    Ready(ReadyFn),
    /// A body that may suspend: a future the engine polls under a deadline.
    Async(CallFn),
}

impl ToolEntry {
    /// Runs the tool as a future, whatever its entry (for tests and simple callers; the
    /// engine matches on the entry instead).
    pub fn call<'a>(self, input: CallInput<'a>) -> BoxFuture<'a, Result<String, ToolError>> {
        match self {
            Self::Ready(run) => Box::pin(std::future::ready(run(input))),
            Self::Async(call) => call(input),
        }
    }
}

/// Hints about a tool's behaviour, as MCP's `ToolAnnotations`. `None` is "not declared".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ToolAnnotations {
    /// The tool does not change its environment.
    pub read_only: Option<bool>,
    /// The tool may destroy or overwrite data.
    pub destructive: Option<bool>,
    /// Calling the tool twice with the same arguments has no further effect.
    pub idempotent: Option<bool>,
    /// The tool reaches things outside the engine (the web, a third-party API).
    pub open_world: Option<bool>,
}

/// A place in a plugin's source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SourceLocation {
    /// The file, as `file!()` gives it.
    pub file: &'static str,
    /// The line.
    pub line: u32,
}

impl ToolDescriptor {
    /// Whether it is a staged action (`#[define_action]`).
    pub fn is_action(&self) -> bool {
        self.staged.is_some()
    }

    /// Runs the tool once with `input`, as a future (see [`ToolEntry::call`]).
    pub fn call<'a>(&self, input: CallInput<'a>) -> BoxFuture<'a, Result<String, ToolError>> {
        self.entry.call(input)
    }

    /// The canonical id, `<namespace>:<name>`.
    pub fn id(&self) -> String {
        [(self.plugin)().namespace, ":", self.name].concat()
    }

    /// Every secret the tool declares.
    pub fn secret_specs(&self) -> impl Iterator<Item = &'static SecretSpec> {
        self.secrets.iter().flat_map(|specs| specs.iter())
    }

    /// The summary for a reader of `locale`; without one, the description's first line.
    pub fn summary_for(&self, locale: &str) -> &'static str {
        match self.summary {
            Some(summary) => summary.resolve(locale),
            None => self.description.lines().next().unwrap_or_default(),
        }
    }
}

inventory::collect!(ToolDescriptor);

/// Every tool linked into this binary, in link order.
pub fn linked_tools() -> impl Iterator<Item = &'static ToolDescriptor> {
    inventory::iter::<ToolDescriptor>.into_iter()
}
