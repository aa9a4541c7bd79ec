//! The start-up checks: every reason not to serve what was linked, found in one pass.
//!
//! The macros already refuse most mistakes at compile time. These checks cover what only
//! the whole binary shows (two crates claiming one namespace, one id defined twice, a
//! plugin built for another engine) and re-check what a descriptor claims, because a
//! descriptor is plain data that need not come from the macros.

mod plugins;
mod problem;
mod registrations;

pub use problem::{Problem, Rule, StartupError};

use plugin_sdk::channel::ChannelDescriptor;
use plugin_sdk::engine::PluginManifest;

use crate::hooks::Hook;
use crate::tool::Tool;
use plugins::{
    check_api_version, check_channel_names, check_engine_range, check_namespaces_unique,
    check_reserved_namespace, check_system_env,
};
use registrations::{
    check_action_shape, check_builtin_name, check_gemini_schema, check_hook_settings,
    check_ids_unique, check_plugin_state, check_strict_schema, check_wire_name,
    check_wire_names_unique,
};

/// The version of engine-core this binary runs, which plugins' `engine` ranges must admit.
pub const ENGINE_VERSION: &str = env!("CARGO_PKG_VERSION");

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
