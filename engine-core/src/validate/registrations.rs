//! The rules for each tool and hook: ids and wire names once each, names the engine
//! keeps, the shapes and schemas every provider accepts, hook settings.

use plugin_sdk::engine::{PluginManifest, SourceLocation};
use plugin_sdk::hook::Event;
use rustc_hash::FxHashMap;

use super::{Problem, Rule};
use crate::builtins::{is_builtins, BUILTIN_TOOL_NAMES};
use crate::hooks::Hook;
use crate::tool::Tool;
use crate::wire::SURFACES;

/// What `#[define_action]` guarantees, re-checked for a descriptor made otherwise (or a
/// parameter type that claims to be an action's and reads more).
pub(super) fn check_action_shape(tool: &Tool, problems: &mut Vec<Problem>) {
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
            descriptor.needs.history,
            "it reads the conversation's history",
        ),
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
            format!("a staged action is given its arguments, the subscriber, the audit logger, its secrets and where it runs only, but {}", wrong.join(", ")),
            "declare it with `#[define_action]`, whose parameters are checked at compile time".into(),
        ));
    }
}

/// A tool or a hook, for the rules both follow.
pub(super) trait Registered {
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
pub(super) fn check_ids_unique<T: Registered>(items: &[T], problems: &mut Vec<Problem>) {
    // Ids and wire names come from linked code, not from a client: a fast hash is safe.
    let mut first_of: FxHashMap<&str, &T> =
        FxHashMap::with_capacity_and_hasher(items.len(), Default::default());
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

pub(super) fn check_wire_names_unique(tools: &[Tool], problems: &mut Vec<Problem>) {
    let mut seen: FxHashMap<&str, &Tool> =
        FxHashMap::with_capacity_and_hasher(tools.len(), Default::default());
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

pub(super) fn check_builtin_name(tool: &Tool, problems: &mut Vec<Problem>) {
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

/// A tool shares only its own plugin's state: the engine builds one state per plugin,
/// from that plugin's settings.
pub(super) fn check_plugin_state(tool: &Tool, problems: &mut Vec<Problem>) {
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

pub(super) fn check_wire_name(tool: &Tool, problems: &mut Vec<Problem>) {
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
pub(super) fn check_strict_schema(tool: &Tool, problems: &mut Vec<Problem>) {
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
pub(super) fn check_gemini_schema(tool: &Tool, problems: &mut Vec<Problem>) {
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
pub(super) fn check_hook_settings(hook: &Hook, problems: &mut Vec<Problem>) {
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
