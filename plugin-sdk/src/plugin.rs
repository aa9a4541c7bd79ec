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
    /// What a marketplace page shows of it (`plugin! { long_description, icon,
    /// category, publisher, documentation_url }`): for catalogues (`engine plugins`
    /// prints it), never read by the engine's checks.
    pub catalogue: Catalogue,
    /// The OAuth 2 providers its tools use (`plugin! { oauth = { ... } }`).
    pub oauth: &'static [crate::context::OAuthProvider],
}

/// What a marketplace page shows of a plugin beyond its name and description.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Catalogue {
    /// A few paragraphs (Markdown) on what the plugin does, inline in `plugin!` or read
    /// from the crate's files at compile time.
    pub long_description: Option<LocalizedText>,
    /// Its icon, from the crate's files.
    pub icon: Option<Icon>,
    /// Where the catalogue groups and filters it.
    pub category: Option<LocalizedText>,
    /// Who publishes it, shown next to its name.
    pub publisher: Option<&'static str>,
    /// Where its documentation is: an https URL.
    pub documentation_url: Option<&'static str>,
}

impl Catalogue {
    /// No catalogue field.
    pub const NONE: Self = Self {
        long_description: None,
        icon: None,
        category: None,
        publisher: None,
        documentation_url: None,
    };
}

/// A plugin's icon: a PNG, WebP or SVG of at most 32 KiB, checked at compile time to be
/// what its extension says.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Icon {
    /// `image/png`, `image/webp` or `image/svg+xml`.
    pub media_type: &'static str,
    /// The file's bytes.
    pub bytes: &'static [u8],
}

impl std::fmt::Debug for Icon {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Icon")
            .field("media_type", &self.media_type)
            .field("bytes", &self.bytes.len())
            .finish()
    }
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
