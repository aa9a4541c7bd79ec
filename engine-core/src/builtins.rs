//! Names a plugin may not take: the engine's own tools and namespaces.

use plugin_sdk::engine::PluginManifest;

/// The engine's built-in tools (the project-scoped file tools). A plugin tool with one of
/// these names would put two `list_files` in front of the model, which then picks by
/// description alone; the engine refuses to start instead.
pub const BUILTIN_TOOL_NAMES: &[&str] = &[
    "create_directory",
    "delete_path",
    "get_text_content",
    "list_files",
    "move_path",
    "read_path_meta",
    "write_text_content",
];

/// Namespaces kept for the engine and its built-ins; no plugin may declare one.
pub const RESERVED_NAMESPACES: &[&str] = &["builtin", "engine", "mcp", "system"];

/// The namespace of the built-in tools, whose wire names are their bare names.
pub const BUILTIN_NAMESPACE: &str = "builtin";

/// The package that defines the built-ins (`engine-builtins`): the one plugin allowed
/// the `builtin` namespace and the built-in names. An image links it like any plugin.
pub const BUILTIN_PACKAGE: &str = "engine-builtins";

/// Whether `plugin` is the engine's built-ins.
pub fn is_builtins(plugin: &PluginManifest) -> bool {
    plugin.namespace == BUILTIN_NAMESPACE && plugin.package == BUILTIN_PACKAGE
}
