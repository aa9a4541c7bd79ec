//! The configuration as the panel changes it ([`Configuration`]): engine-cli implements
//! it over the file `engine serve` was started with and the secrets the panel sets.

/// The engine's configuration, as the panel changes it: the file its tool switches
/// write, and the secrets it sets. Each change reloads the engine the way `SIGHUP` does,
/// and is kept only once the engine took it. Blocking: call it off the async workers.
pub trait Configuration: Send + Sync {
    /// Reads the configuration file and, when `change` makes a new text of it, reloads
    /// the engine with that text (checked as `SIGHUP`'s reload checks it) and, once the
    /// engine took it, writes it to the file; answers whether it changed. Read, reload
    /// and write are one step: no `SIGHUP` or other edit comes between them. A text the
    /// reload refuses is not written, and the error says why.
    fn edit(
        &self,
        change: &mut dyn FnMut(&str) -> Result<Option<String>, String>,
    ) -> Result<bool, String>;

    /// Sets (`Some`) or clears (`None`) the panel's value of `agent`'s secret `key`,
    /// reloading the engine with it; kept (in a file only the engine's user can read, or
    /// the shared database of a `[database]`) once the engine took it.
    fn set_secret(&self, agent: &str, key: &str, value: Option<&str>) -> Result<(), String>;
}
