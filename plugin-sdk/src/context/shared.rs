//! A plugin's settings and the state built from them: typed, non-secret configuration
//! per agent (`[agents.<agent>.plugins.<namespace>]`), turned once at start-up into what
//! its tools share (an HTTP client, a connection pool), as axum handlers share `State`.

use std::any::{Any, TypeId};
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use serde::de::DeserializeOwned;

/// What a plugin's tools share, built once per agent from the plugin's settings.
/// Declared in `plugin! { state = T }`; tools take it as [`Shared<T>`].
///
/// ```
/// use plugin_sdk::shared::PluginState;
///
/// #[derive(serde::Deserialize)]
/// pub struct CrmSettings {
///     base_url: String,
///     region: String,
/// }
///
/// pub struct Crm {
///     base_url: String,
///     region: String,
/// }
///
/// impl PluginState for Crm {
///     type Settings = CrmSettings;
///
///     fn build(settings: CrmSettings) -> Result<Self, String> {
///         if !settings.base_url.starts_with("https://") {
///             return Err(format!("`base_url` is {}: give an https:// URL", settings.base_url));
///         }
///         Ok(Crm { base_url: settings.base_url, region: settings.region })
///     }
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a plugin's state",
    label = "not a plugin's state",
    note = "implement `plugin_sdk::shared::PluginState` for it: `type Settings` (what the configuration gives, deserialized) and `fn build(settings) -> Result<Self, String>`"
)]
pub trait PluginState: Send + Sync + Sized + 'static {
    /// The settings, as `[agents.<agent>.plugins.<namespace>]` gives them (a table: a
    /// plugin without settings takes `struct Settings {}`, and an empty table). They are
    /// not secret: they are shown in errors. Every key they do not read is a
    /// configuration problem, like any unknown key, so leave out `deny_unknown_fields`
    /// (which reports the first only); keys under `#[serde(flatten)]` are not seen.
    type Settings: DeserializeOwned;

    /// Builds the state from checked settings, once per agent at start-up; an error
    /// (one sentence with its fix) refuses start-up.
    fn build(settings: Self::Settings) -> Result<Self, String>;
}

/// A plugin's state, as its tools take it: `crm: Shared<Crm>` derefs to `&Crm`.
///
/// A tool may take only its own plugin's state (start-up refuses another's). An agent
/// that configures no settings for the plugin does not equip the tools that take it.
pub struct Shared<T>(Arc<T>);

impl<T> Shared<T> {
    /// The state, for a test that calls a tool by hand (an engine builds it from the
    /// settings).
    pub fn new(state: T) -> Self {
        Self(Arc::new(state))
    }
}

impl<T: PluginState> Shared<T> {
    pub(crate) fn into_any(self) -> AnyState {
        self.0
    }

    /// The state `state` holds, if it is a `T`.
    pub(crate) fn from_any(state: &AnyState) -> Option<Self> {
        Arc::clone(state).downcast::<T>().ok().map(Self)
    }
}

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<T> Deref for Shared<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> fmt::Debug for Shared<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Shared<{}>", std::any::type_name::<T>())
    }
}

/// A plugin's state, type-erased, as a context carries it.
pub(crate) type AnyState = Arc<dyn Any + Send + Sync>;

/// A state type, as the engine compares a tool's with its plugin's.
#[derive(Clone, Copy)]
pub struct StateType {
    id: fn() -> TypeId,
    name: fn() -> &'static str,
}

impl StateType {
    /// `T`'s.
    pub const fn of<T: 'static>() -> Self {
        Self {
            id: TypeId::of::<T>,
            name: std::any::type_name::<T>,
        }
    }

    /// The type's name, for messages.
    pub fn name(&self) -> &'static str {
        (self.name)()
    }
}

impl PartialEq for StateType {
    fn eq(&self, other: &Self) -> bool {
        (self.id)() == (other.id)()
    }
}

impl Eq for StateType {}

impl fmt::Debug for StateType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What `plugin! { state = T }` registers: how the engine checks the settings and builds
/// the state, without naming `T`.
pub struct StateBuilder {
    /// The state's type.
    pub state: StateType,
    check: fn(&serde_json::Value) -> Vec<SettingsProblem>,
    build: fn(serde_json::Value) -> Result<AnyState, String>,
}

/// A problem with a plugin's settings: the key's dotted path below the settings (empty
/// for the settings as a whole) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingsProblem {
    /// The key, as in `retry.max`.
    pub key: String,
    /// What is wrong, as a phrase after the key.
    pub problem: String,
}

impl StateBuilder {
    /// The builder of `T`.
    pub const fn of<T: PluginState>() -> Self {
        Self {
            state: StateType::of::<T>(),
            check: check_settings::<T>,
            build: build_state::<T>,
        }
    }

    /// Every problem of `settings`: keys `T::Settings` does not read, and the first value
    /// it refuses.
    pub fn check(&self, settings: &serde_json::Value) -> Vec<SettingsProblem> {
        (self.check)(settings)
    }

    /// The state, from settings [`check`](Self::check) passed.
    pub fn build(&self, settings: serde_json::Value) -> Result<Arc<dyn Any + Send + Sync>, String> {
        (self.build)(settings)
    }
}

impl fmt::Debug for StateBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StateBuilder")
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

fn check_settings<T: PluginState>(settings: &serde_json::Value) -> Vec<SettingsProblem> {
    let mut unknown = Vec::new();
    let mut note = |path: serde_ignored::Path<'_>| unknown.push(dotted_key(&path));
    let deserializer = serde_ignored::Deserializer::new(settings, &mut note);
    let refused = serde_path_to_error::deserialize::<_, T::Settings>(deserializer).err();
    let mut problems: Vec<SettingsProblem> = unknown
        .into_iter()
        .map(|key| SettingsProblem {
            key,
            problem: "is not a setting the plugin reads".to_owned(),
        })
        .collect();
    if let Some(error) = refused {
        let key = error.path().to_string();
        problems.push(SettingsProblem {
            key: if key == "." { String::new() } else { key },
            problem: format!("is not valid: {}", error.inner()),
        });
    }
    problems
}

fn build_state<T: PluginState>(settings: serde_json::Value) -> Result<AnyState, String> {
    let settings: T::Settings =
        serde_json::from_value(settings).map_err(|error| error.to_string())?;
    Ok(Arc::new(T::build(settings)?))
}

/// A key's path as a configuration file spells it (`agents.a.model.cap`): serde_ignored's,
/// without the steps into an `Option` or a newtype, which the file does not show.
pub fn dotted_key(path: &serde_ignored::Path<'_>) -> String {
    use serde_ignored::Path;
    let (parent, step) = match path {
        Path::Root => return String::new(),
        Path::Map { parent, key } => (parent, key.clone()),
        Path::Seq { parent, index } => (parent, index.to_string()),
        Path::Some { parent }
        | Path::NewtypeStruct { parent }
        | Path::NewtypeVariant { parent } => return dotted_key(parent),
    };
    match dotted_key(parent) {
        parent if parent.is_empty() => step,
        parent => format!("{parent}.{step}"),
    }
}
