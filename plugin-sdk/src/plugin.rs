//! The manifest of a plugin crate, declared once with `plugin_sdk::plugin! { ... }`.

use crate::LocalizedText;

/// Who a plugin is and which engines it supports. `plugin!` builds it at compile time.
#[derive(Debug)]
pub struct PluginManifest {
    /// Prefix of every tool id: `<namespace>:<tool>`. Kebab-case, at most 32 characters.
    pub namespace: &'static str,
    /// The Cargo package that declared the plugin.
    pub package: &'static str,
    /// The package's version.
    pub version: &'static str,
    /// The semver requirement on the engine's version, checked by the macro's parser.
    pub engine: &'static str,
    /// How people see the plugin named; without it, the namespace.
    pub display_name: Option<LocalizedText>,
    /// One sentence on what the plugin's tools are for.
    pub description: Option<LocalizedText>,
    /// The version of the action and channel API the plugin was written against
    /// (`api_version = 0`); `None` for a plugin of tools and hooks only. Version 0 is
    /// unstable for channels (see [`crate::channel`]).
    pub api_version: Option<u32>,
    /// How the engine builds what the plugin's tools share from its settings
    /// (`plugin! { state = T }`); `None`: the plugin takes no settings.
    pub state: Option<&'static crate::context::StateBuilder>,
    /// What the engine's image must carry for the plugin's tools (`plugin! { system =
    /// { ... } }`): read when an image is built, and for the variables' defaults when
    /// the engine starts.
    pub system: System,
}

/// A plugin's system requirements: Debian packages to install in the engine's image and
/// environment variables with their defaults (a value set in the environment wins).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct System {
    /// Debian package names.
    pub debian: &'static [&'static str],
    /// Variables and their default values.
    pub env: &'static [(&'static str, &'static str)],
}

impl System {
    /// No requirement.
    pub const NONE: Self = Self {
        debian: &[],
        env: &[],
    };
}

/// One linked plugin, as `plugin!` submits it to the registry.
#[doc(hidden)]
pub struct PluginEntry(pub &'static PluginManifest);

inventory::collect!(PluginEntry);

/// Every plugin manifest linked into this binary, in link order.
pub fn linked_plugins() -> impl Iterator<Item = &'static PluginManifest> {
    inventory::iter::<PluginEntry>
        .into_iter()
        .map(|entry| entry.0)
}
