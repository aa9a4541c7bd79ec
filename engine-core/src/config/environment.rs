//! Reading the process environment once, at start-up, and taking the secrets out of it.

use super::SECRET_ENV_PREFIX;

/// The environment as the configuration reads it: give `variables` to
/// [`EngineConfig::load`](super::EngineConfig::load), and log `skipped` once logging runs.
#[derive(Debug)]
pub struct Environment {
    /// Every variable whose name and value are UTF-8.
    pub variables: Vec<(String, String)>,
    /// The names (lossily decoded) of the variables left out because their name or value
    /// is not UTF-8: a warning for the log, not a reason to refuse to start.
    pub skipped: Vec<String>,
}

/// Reads every variable, and removes each `ENGINE_SECRET__*` one from the process
/// environment, so that no plugin, library or child process can read a secret from it:
/// a tool gets the secrets it declares through its context, and no others.
///
/// Call it on the main thread before any other thread exists (no runtime, no logger):
/// `remove_var` is unsound only when another thread reads or writes the environment at
/// the same time, and here none can. (The function is `unsafe` from edition 2024; this
/// workspace is edition 2021.)
pub fn take_environment() -> Environment {
    let mut variables = Vec::new();
    let mut skipped = Vec::new();
    for (name, value) in std::env::vars_os() {
        if name
            .as_encoded_bytes()
            .starts_with(SECRET_ENV_PREFIX.as_bytes())
        {
            std::env::remove_var(&name);
        }
        match (name.into_string(), value.into_string()) {
            (Ok(name), Ok(value)) => variables.push((name, value)),
            (name, _) => {
                skipped.push(name.unwrap_or_else(|name| name.to_string_lossy().into_owned()))
            }
        }
    }
    Environment { variables, skipped }
}
