//! The start-up checks: every reason not to serve what was linked, found in one pass.
//!
//! The macros already refuse most mistakes at compile time. These checks cover what only
//! the whole binary shows (two crates claiming one namespace, one id defined twice, a
//! plugin built for another engine) and re-check what a descriptor claims, because a
//! descriptor is plain data that need not come from the macros.

use std::collections::HashMap;
use std::fmt;

use plugin_sdk::action::API_VERSIONS;
use plugin_sdk::channel::ChannelDescriptor;
use plugin_sdk::engine::{PluginManifest, SourceLocation};
use plugin_sdk::hook::Event;
use semver::{Version, VersionReq};

use crate::builtins::{is_builtins, BUILTIN_TOOL_NAMES, RESERVED_NAMESPACES};
use crate::hooks::Hook;
use crate::tool::Tool;
use crate::wire::SURFACES;

/// The version of engine-core this binary runs, which plugins' `engine` ranges must admit.
pub const ENGINE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Which start-up rule a problem breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Rule {
    /// Two `plugin!` declarations claim one namespace.
    NamespaceTaken,
    /// Two tools, or two hooks, have one canonical id.
    DuplicateId,
    /// Two tools have one wire name.
    WireNameCollision,
    /// A plugin or tool takes a name the engine keeps for itself.
    ReservedName,
    /// The plugin's `engine` range does not admit this engine's version.
    EngineVersion,
    /// A tool not marked `strict = false` has a schema that strict mode refuses.
    StrictSchema,
    /// A wire name that some surface refuses (too long, or a character it does not allow).
    WireName,
    /// A schema that the Gemini renderer cannot express.
    GeminiSchema,
    /// A hook declares `mutates_response` at an event other than `response_generated`.
    HookMutation,
    /// A hook's timeout is zero.
    HookTimeout,
    /// A hook fails closed at an event where it cannot: `response_sent`, or
    /// `response_generated` without `mutates_response`.
    HookFailClosed,
    /// A plugin with actions or channels declares no `api_version`, or one this engine
    /// does not support.
    ApiVersion,
    /// Two channels have one name, or a name is not a path segment.
    ChannelName,
    /// A staged action reads what an action is never given (the model, knowledge, the
    /// call's context), or is not strict, or is exclusive: a descriptor the macros would
    /// not have made.
    ActionShape,
    /// A tool takes a `Shared<T>` other than its plugin's `plugin! { state = T }`.
    PluginState,
    /// Two plugins declare one environment variable with different defaults
    /// (`plugin! { system = { env = { ... } } }`).
    SystemEnv,
}

impl Rule {
    /// The rule's name in reports, such as `duplicate-id`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NamespaceTaken => "namespace-taken",
            Self::DuplicateId => "duplicate-id",
            Self::WireNameCollision => "wire-name-collision",
            Self::ReservedName => "reserved-name",
            Self::EngineVersion => "engine-version",
            Self::StrictSchema => "strict-schema",
            Self::WireName => "wire-name",
            Self::GeminiSchema => "gemini-schema",
            Self::HookMutation => "hook-mutation",
            Self::HookTimeout => "hook-timeout",
            Self::HookFailClosed => "hook-fail-closed",
            Self::ApiVersion => "api-version",
            Self::ChannelName => "channel-name",
            Self::ActionShape => "action-shape",
            Self::PluginState => "plugin-state",
            Self::SystemEnv => "system-env",
        }
    }
}

/// One reason the engine refuses to start, with who caused it and how to fix it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// The rule broken.
    pub rule: Rule,
    /// The plugin crate at fault, as `package version`.
    pub plugin: String,
    /// The tool at fault, by canonical id, when the problem is a tool's.
    pub tool: Option<String>,
    /// The hook at fault, by canonical id, when the problem is a hook's.
    pub hook: Option<String>,
    /// The channel at fault, by name, when the problem is a channel's.
    pub channel: Option<String>,
    /// Where the tool or hook is defined.
    pub location: Option<SourceLocation>,
    /// What is wrong.
    pub message: String,
    /// What to change.
    pub fix: String,
}

impl Problem {
    fn plugin(rule: Rule, plugin: &PluginManifest, message: String, fix: String) -> Self {
        Self {
            rule,
            plugin: format!("{} {}", plugin.package, plugin.version),
            tool: None,
            hook: None,
            channel: None,
            location: None,
            message,
            fix,
        }
    }

    fn tool(rule: Rule, tool: &Tool, message: String, fix: String) -> Self {
        Self {
            tool: Some(tool.id().to_owned()),
            location: Some(tool.descriptor().location),
            ..Self::plugin(rule, tool.plugin(), message, fix)
        }
    }

    fn channel(rule: Rule, channel: &ChannelDescriptor, message: String, fix: String) -> Self {
        Self {
            channel: Some(channel.name.to_owned()),
            location: Some(channel.location),
            ..Self::plugin(rule, (channel.plugin)(), message, fix)
        }
    }

    fn hook(rule: Rule, hook: &Hook, message: String, fix: String) -> Self {
        Self {
            hook: Some(hook.id().to_owned()),
            location: Some(hook.descriptor().location),
            ..Self::plugin(rule, hook.plugin(), message, fix)
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] plugin {}", self.rule.as_str(), self.plugin)?;
        if let Some(tool) = &self.tool {
            write!(f, ", tool `{tool}`")?;
        }
        if let Some(hook) = &self.hook {
            write!(f, ", hook `{hook}`")?;
        }
        if let Some(channel) = &self.channel {
            write!(f, ", channel `{channel}`")?;
        }
        if let Some(at) = self.location {
            write!(f, " ({}:{})", at.file, at.line)?;
        }
        write!(f, ": {}\n    fix: {}", self.message, self.fix)
    }
}

/// Why the engine did not start: every problem found, in a deterministic order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StartupError {
    problems: Vec<Problem>,
}

impl StartupError {
    pub(crate) fn new(mut problems: Vec<Problem>) -> Self {
        problems.sort_by(|a, b| {
            (&a.plugin, &a.tool, &a.hook, &a.channel, a.rule, &a.message)
                .cmp(&(&b.plugin, &b.tool, &b.hook, &b.channel, b.rule, &b.message))
        });
        Self { problems }
    }

    /// The problems, sorted by plugin, tool and rule.
    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }
}

impl fmt::Display for StartupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.problems.len();
        let noun = if count == 1 { "problem" } else { "problems" };
        writeln!(
            f,
            "the engine refused to start: {count} {noun} with the linked plugins"
        )?;
        for problem in &self.problems {
            writeln!(f, "  {problem}")?;
        }
        Ok(())
    }
}

impl std::error::Error for StartupError {}

/// Every problem with `plugins`, `tools`, `hooks` and `channels` (all sorted), none
/// skipped.
pub(crate) fn validate(
    plugins: &[&'static PluginManifest],
    tools: &[Tool],
    hooks: &[Hook],
    channels: &[&'static ChannelDescriptor],
) -> Vec<Problem> {
    let mut problems = Vec::new();
    for plugin in plugins {
        check_engine_range(plugin, &mut problems);
        check_reserved_namespace(plugin, &mut problems);
        check_api_version(plugin, tools, channels, &mut problems);
    }
    check_channel_names(channels, &mut problems);
    check_namespaces_unique(plugins, &mut problems);
    check_system_env(plugins, &mut problems);
    check_ids_unique(tools, &mut problems);
    check_wire_names_unique(tools, &mut problems);
    for tool in tools {
        check_action_shape(tool, &mut problems);
        check_builtin_name(tool, &mut problems);
        check_plugin_state(tool, &mut problems);
        check_wire_name(tool, &mut problems);
        check_strict_schema(tool, &mut problems);
        check_gemini_schema(tool, &mut problems);
    }
    check_ids_unique(hooks, &mut problems);
    for hook in hooks {
        check_hook_settings(hook, &mut problems);
    }
    problems
}

fn check_engine_range(plugin: &PluginManifest, problems: &mut Vec<Problem>) {
    let running = Version::parse(ENGINE_VERSION).expect("Cargo package versions are semver");
    let fix = format!(
        "build the plugin against a release whose `engine` range admits {ENGINE_VERSION}, or build the engine from an engine-core it supports"
    );
    match VersionReq::parse(plugin.engine) {
        Ok(range) if range.matches(&running) => {}
        Ok(_) => problems.push(Problem::plugin(
            Rule::EngineVersion,
            plugin,
            format!(
                "the plugin needs engine `{}`, and this engine is {ENGINE_VERSION}",
                plugin.engine
            ),
            fix,
        )),
        Err(error) => problems.push(Problem::plugin(
            Rule::EngineVersion,
            plugin,
            format!(
                "the engine range `{}` is not semver: {error}",
                plugin.engine
            ),
            fix,
        )),
    }
}

/// A plugin with actions or channels states the API it was written against, and this
/// engine supports it; a version stated without them must be supported too.
fn check_api_version(
    plugin: &'static PluginManifest,
    tools: &[Tool],
    channels: &[&'static ChannelDescriptor],
    problems: &mut Vec<Problem>,
) {
    let owns = |owner: &PluginManifest| std::ptr::eq(owner, plugin);
    let actions = tools
        .iter()
        .filter(|tool| owns(tool.plugin()) && tool.is_action())
        .count();
    let channels = channels
        .iter()
        .filter(|channel| owns((channel.plugin)()))
        .count();
    let supported = API_VERSIONS
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let message = match plugin.api_version {
        Some(version) if API_VERSIONS.contains(&version) => return,
        Some(version) => format!(
            "the plugin is written against action and channel API version {version}, and this engine supports {supported}"
        ),
        None if actions + channels > 0 => format!(
            "the plugin defines {actions} action(s) and {channels} channel(s) but declares no `api_version`"
        ),
        None => return,
    };
    problems.push(Problem::plugin(
        Rule::ApiVersion,
        plugin,
        message,
        format!("declare the API the plugin was written against in `plugin! {{ api_version = N }}` (supported: {supported}), or link a release of the plugin written for this engine"),
    ));
}

/// What `#[define_action]` guarantees, re-checked for a descriptor made otherwise (or a
/// parameter type that claims to be an action's and reads more).
fn check_action_shape(tool: &Tool, problems: &mut Vec<Problem>) {
    if !tool.is_action() {
        return;
    }
    let descriptor = tool.descriptor();
    let wrong: Vec<&str> = [
        (descriptor.needs.model, "it reads the model"),
        (
            descriptor.knowledge.is_some(),
            "it reads the knowledge base",
        ),
        (descriptor.needs.locale, "it reads the call's context"),
        (
            descriptor.needs.state.is_some(),
            "it reads its plugin's state",
        ),
        (!descriptor.strict, "its arguments are not strict"),
        (descriptor.exclusive, "it is exclusive"),
    ]
    .into_iter()
    .filter_map(|(broken, what)| broken.then_some(what))
    .collect();
    if !wrong.is_empty() {
        problems.push(Problem::tool(
            Rule::ActionShape,
            tool,
            format!("a staged action is given its arguments, the subscriber, the audit logger and its secrets only, but {}", wrong.join(", ")),
            "declare it with `#[define_action]`, whose parameters are checked at compile time".into(),
        ));
    }
}

/// Each channel is one path, `/channels/<name>`.
fn check_channel_names(channels: &[&'static ChannelDescriptor], problems: &mut Vec<Problem>) {
    for channel in channels {
        let valid = channel.name.starts_with(|c: char| c.is_ascii_lowercase())
            && channel.name.len() <= 32
            && channel
                .name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if !valid {
            problems.push(Problem::channel(
                Rule::ChannelName,
                channel,
                format!("`{}` is not a path segment `/channels/<name>` accepts", channel.name),
                "name it with lowercase letters, digits and `-`, starting with a letter, at most 32 characters".into(),
            ));
        }
    }
    for pair in channels.windows(2) {
        let (first, second) = (pair[0], pair[1]);
        if first.name == second.name {
            let other = (first.plugin)();
            problems.push(Problem::channel(
                Rule::ChannelName,
                second,
                format!(
                    "the channel name `{}` is also taken by {} {} ({}:{})",
                    second.name,
                    other.package,
                    other.version,
                    first.location.file,
                    first.location.line
                ),
                "give one of the channels another name: `#[define_channel(name = \"...\")]`".into(),
            ));
        }
    }
}

fn check_reserved_namespace(plugin: &PluginManifest, problems: &mut Vec<Problem>) {
    if RESERVED_NAMESPACES.contains(&plugin.namespace) && !is_builtins(plugin) {
        problems.push(Problem::plugin(
            Rule::ReservedName,
            plugin,
            format!(
                "the namespace `{}` is kept for the engine (reserved: {})",
                plugin.namespace,
                RESERVED_NAMESPACES.join(", ")
            ),
            "declare another namespace in `plugin! { namespace = \"...\" }`".into(),
        ));
    }
}

fn check_namespaces_unique(plugins: &[&'static PluginManifest], problems: &mut Vec<Problem>) {
    for pair in plugins.windows(2) {
        let (first, second) = (pair[0], pair[1]);
        if first.namespace == second.namespace {
            problems.push(Problem::plugin(
                Rule::NamespaceTaken,
                second,
                format!(
                    "the namespace `{}` is also declared by {} {}",
                    second.namespace, first.package, first.version
                ),
                "link one version of each plugin, and give each plugin crate its own `namespace`"
                    .into(),
            ));
        }
    }
}

/// A tool or a hook, for the rules both follow.
trait Registered {
    /// `tool` or `hook`, and how to rename one.
    const KIND: &'static str;
    const RENAME: &'static str;
    fn id(&self) -> &str;
    fn location(&self) -> SourceLocation;
    fn plugin(&self) -> &'static PluginManifest;
    fn problem(&self, rule: Rule, message: String, fix: String) -> Problem;
}

/// `Registered` for a registration type with `id`, `descriptor().location` and `plugin`.
macro_rules! registered {
    ($type:ty, $kind:literal, $rename:literal, $problem:path) => {
        impl Registered for $type {
            const KIND: &'static str = $kind;
            const RENAME: &'static str = $rename;
            fn id(&self) -> &str {
                self.id()
            }
            fn location(&self) -> SourceLocation {
                self.descriptor().location
            }
            fn plugin(&self) -> &'static PluginManifest {
                self.plugin()
            }
            fn problem(&self, rule: Rule, message: String, fix: String) -> Problem {
                $problem(rule, self, message, fix)
            }
        }
    };
}

registered!(
    Tool,
    "tool",
    "`#[define_tool(name = \"...\")]`",
    Problem::tool
);
registered!(
    Hook,
    "hook",
    "`#[define_hook(name = \"...\")]`",
    Problem::hook
);

/// Each id once among `items` (tools, or hooks across events): every later definition of
/// an id is a problem that names the first.
fn check_ids_unique<T: Registered>(items: &[T], problems: &mut Vec<Problem>) {
    let mut first_of: HashMap<&str, &T> = HashMap::with_capacity(items.len());
    for item in items {
        let Some(first) = first_of.get(item.id()) else {
            first_of.insert(item.id(), item);
            continue;
        };
        let at = first.location();
        problems.push(item.problem(
            Rule::DuplicateId,
            format!(
                "the {} id `{}` is also defined at {}:{} by {}",
                T::KIND,
                item.id(),
                at.file,
                at.line,
                first.plugin().package
            ),
            format!(
                "rename one of the {}s ({} or the function)",
                T::KIND,
                T::RENAME
            ),
        ));
    }
}

fn check_wire_names_unique(tools: &[Tool], problems: &mut Vec<Problem>) {
    let mut seen: HashMap<&str, &Tool> = HashMap::with_capacity(tools.len());
    for tool in tools {
        match seen.get(tool.wire_name()) {
            // Same id: already reported as a duplicate id.
            Some(first) if first.id() == tool.id() => {}
            Some(first) => problems.push(Problem::tool(
                Rule::WireNameCollision,
                tool,
                format!(
                    "its wire name `{}` is also the wire name of `{}` ({}), so a call could not tell them apart",
                    tool.wire_name(),
                    first.id(),
                    first.plugin().package
                ),
                "namespaces must not contain `_` and tool names must be unique: rename the namespace or the tool".into(),
            )),
            None => {
                seen.insert(tool.wire_name(), tool);
            }
        }
    }
}

fn check_builtin_name(tool: &Tool, problems: &mut Vec<Problem>) {
    let name = tool.descriptor().name;
    if BUILTIN_TOOL_NAMES.contains(&name) && !is_builtins(tool.plugin()) {
        problems.push(Problem::tool(
            Rule::ReservedName,
            tool,
            format!("`{name}` is the name of a built-in tool, and the model would see both"),
            "name the tool after what it does in your plugin, such as `acme_list_files` (`#[define_tool(name = \"...\")]`)".into(),
        ));
    }
}

/// No image can carry two defaults of one variable: the build of one fails, and so does
/// start-up, naming both plugins and both values.
fn check_system_env(plugins: &[&'static PluginManifest], problems: &mut Vec<Problem>) {
    let Err(conflicts) = crate::SystemRequirements::of(plugins) else {
        return;
    };
    for conflict in conflicts {
        // Reported as each plugin's whose default differs from the first declared one.
        let Some((_, first)) = conflict.declared.first() else {
            continue;
        };
        let differing: Vec<&str> = conflict
            .declared
            .iter()
            .filter(|(_, value)| value != first)
            .map(|(plugin, _)| plugin.as_str())
            .collect();
        for plugin in plugins.iter().filter(|plugin| {
            differing.contains(&format!("{} {}", plugin.package, plugin.version).as_str())
        }) {
            problems.push(Problem::plugin(
            Rule::SystemEnv,
            plugin,
            conflict.to_string(),
                format!("make the plugins agree on one default, or take `{}` out of all but one `plugin! {{ system = ... }}` and set it in the image's environment", conflict.name),
            ));
        }
    }
}

/// A tool shares only its own plugin's state: the engine builds one state per plugin,
/// from that plugin's settings.
fn check_plugin_state(tool: &Tool, problems: &mut Vec<Problem>) {
    let Some(taken) = tool.descriptor().needs.state else {
        return;
    };
    let declared = tool.plugin().state.map(|builder| builder.state);
    if declared == Some(taken) {
        return;
    }
    let message = match declared {
        Some(declared) => format!(
            "the tool takes `Shared<{}>`, and its plugin's state is `{}`",
            taken.name(),
            declared.name()
        ),
        None => format!(
            "the tool takes `Shared<{}>`, and its plugin declares no state",
            taken.name()
        ),
    };
    problems.push(Problem::tool(
        Rule::PluginState,
        tool,
        message,
        format!("take the plugin's own state, declared once in `plugin! {{ state = {} }}` (a tool cannot share another plugin's)", taken.name()),
    ));
}

fn check_wire_name(tool: &Tool, problems: &mut Vec<Problem>) {
    let wire = tool.wire_name();
    let refusing: Vec<_> = SURFACES
        .iter()
        .filter(|rules| !rules.accepts(wire))
        .collect();
    if refusing.is_empty() {
        return;
    }
    let rules: Vec<String> = refusing
        .iter()
        .map(|rules| {
            format!(
                "{} allows {}, at most {}",
                rules.surface, rules.alphabet, rules.max_len
            )
        })
        .collect();
    problems.push(Problem::tool(
        Rule::WireName,
        tool,
        format!(
            "the wire name `{wire}` ({} characters) is refused: {}",
            wire.len(),
            rules.join("; ")
        ),
        "shorten the tool name (`#[define_tool(name = \"...\")]`) or the plugin's namespace".into(),
    ));
}

/// The strict re-check's findings, computed with the tool's schemas (see `Tool::new`).
fn check_strict_schema(tool: &Tool, problems: &mut Vec<Problem>) {
    let violations = tool.strict_violations();
    if violations.is_empty() {
        return;
    }
    let found: Vec<String> = violations.iter().map(ToString::to_string).collect();
    problems.push(Problem::tool(
        Rule::StrictSchema,
        tool,
        format!("the arguments schema is not strict: {}", found.join("; ")),
        "fix the hand-written `JsonSchema` or `StrictSchema` impl behind it, or opt out with `#[tool_args(strict = false)]` and `#[define_tool(strict = false)]`".into(),
    ));
}

/// What the Gemini conversion found, computed with the tool's schemas (see `Tool::new`).
fn check_gemini_schema(tool: &Tool, problems: &mut Vec<Problem>) {
    if let Some(reason) = tool.gemini_problem() {
        problems.push(Problem::tool(
            Rule::GeminiSchema,
            tool,
            format!("Gemini cannot take the arguments schema: {reason}"),
            "make the arguments type non-recursive (a fixed number of levels, each its own struct)"
                .into(),
        ));
    }
}

/// What the macro refuses at compile time, re-checked for descriptors written by hand.
fn check_hook_settings(hook: &Hook, problems: &mut Vec<Problem>) {
    let descriptor = hook.descriptor();
    let event = hook.event();
    if descriptor.mutates_response && event != Event::ResponseGenerated {
        problems.push(Problem::hook(
            Rule::HookMutation,
            hook,
            format!("the hook runs at `{event}` and declares `mutates_response`, which only `response_generated` hooks may"),
            "set `mutates_response: false`, or move the hook to `response_generated`".into(),
        ));
    }
    let replaces = event == Event::ResponseGenerated && descriptor.mutates_response;
    let fail_closed_fits =
        matches!(event, Event::ConversationStart | Event::MessageReceived) || replaces;
    if descriptor.fail_closed.is_some() && !fail_closed_fits {
        problems.push(Problem::hook(
            Rule::HookFailClosed,
            hook,
            format!("the hook runs at `{event}` and fails closed, which it can only do before the model (halting the turn) or at `response_generated` with `mutates_response` (replacing the reply)"),
            "set `fail_closed: None`, or `mutates_response: true` on a `response_generated` hook".into(),
        ));
    }
    if descriptor.timeout.is_zero() {
        problems.push(Problem::hook(
            Rule::HookTimeout,
            hook,
            "the hook's timeout is zero, so it could never run".into(),
            "give the hook a timeout of at least 1 ms (`timeout_ms = ...`)".into(),
        ));
    }
}
