//! A start-up problem: the rule it breaks, where, and the fix; and the error that holds
//! them all.

use std::fmt;

use plugin_sdk::channel::ChannelDescriptor;
use plugin_sdk::engine::{PluginManifest, SourceLocation};

use crate::hooks::Hook;
use crate::tool::Tool;

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
    pub(super) fn plugin(
        rule: Rule,
        plugin: &PluginManifest,
        message: String,
        fix: String,
    ) -> Self {
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

    pub(super) fn tool(rule: Rule, tool: &Tool, message: String, fix: String) -> Self {
        Self {
            tool: Some(tool.id().to_owned()),
            location: Some(tool.descriptor().location),
            ..Self::plugin(rule, tool.plugin(), message, fix)
        }
    }

    pub(super) fn channel(
        rule: Rule,
        channel: &ChannelDescriptor,
        message: String,
        fix: String,
    ) -> Self {
        Self {
            channel: Some(channel.name.to_owned()),
            location: Some(channel.location),
            ..Self::plugin(rule, (channel.plugin)(), message, fix)
        }
    }

    pub(super) fn hook(rule: Rule, hook: &Hook, message: String, fix: String) -> Self {
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
