//! The rules for plugins as a whole: the engine range, API versions, namespaces, channel
//! names, system requirements.

use plugin_sdk::action::API_VERSIONS;
use plugin_sdk::channel::ChannelDescriptor;
use plugin_sdk::engine::PluginManifest;
use semver::{Version, VersionReq};

use super::{Problem, Rule, ENGINE_VERSION};
use crate::builtins::{is_builtins, RESERVED_NAMESPACES};
use crate::tool::Tool;

pub(super) fn check_engine_range(plugin: &PluginManifest, problems: &mut Vec<Problem>) {
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
pub(super) fn check_api_version(
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

/// Each channel is one path, `/channels/<name>`.
pub(super) fn check_channel_names(
    channels: &[&'static ChannelDescriptor],
    problems: &mut Vec<Problem>,
) {
    for channel in channels {
        let valid = channel.name.starts_with(|c: char| c.is_ascii_lowercase())
            && channel.name.len() <= 32
            && channel
                .name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        // The engine's own ways in, as a tool's `TurnChannel` names them.
        let own = match channel.name {
            crate::conversation::API_CHANNEL => Some("turn route"),
            crate::conversation::CLI_CHANNEL => Some("command line"),
            _ => None,
        };
        if let Some(own) = own {
            problems.push(Problem::channel(
                Rule::ChannelName,
                channel,
                format!("`{}` names the turns of the engine's own {own}: a tool's `TurnChannel` could not tell them apart", channel.name),
                "name the channel after the service it serves (`slack`, `telegram`)".into(),
            ));
        }
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

pub(super) fn check_reserved_namespace(plugin: &PluginManifest, problems: &mut Vec<Problem>) {
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

pub(super) fn check_namespaces_unique(
    plugins: &[&'static PluginManifest],
    problems: &mut Vec<Problem>,
) {
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

/// No image can carry two defaults of one variable: the build of one fails, and so does
/// start-up, naming both plugins and both values.
pub(super) fn check_system_env(plugins: &[&'static PluginManifest], problems: &mut Vec<Problem>) {
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
