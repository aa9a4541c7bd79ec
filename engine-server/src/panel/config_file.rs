//! The configuration file the panel's tool switches write ([`ConfigFile`]): engine-cli
//! implements it over the file `engine serve` was started with.

/// The engine's configuration file, as the panel changes it: read its text, and apply
/// a new text the way `SIGHUP` reloads one, writing it only once the engine took it.
pub trait ConfigFile: Send + Sync {
    /// The file's text as it is now.
    fn text(&self) -> std::io::Result<String>;

    /// Reloads the engine with `text` as the configuration (checked as `SIGHUP`'s reload
    /// checks it) and, once the engine took it, writes it to the file. A text the reload
    /// refuses is not written, and the error says why. Blocking: call it off the async
    /// workers.
    fn apply(&self, text: &str) -> Result<(), String>;
}
