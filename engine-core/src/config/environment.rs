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
/// What removal does not reach: on Linux, `/proc/<pid>/environ` keeps showing the
/// environment the process started with to processes of the same user (the kernel reads
/// the original block, which `remove_var` does not overwrite). Where that matters, give
/// secrets in the configuration file instead, readable by the engine's user only.
///
/// # Safety
///
/// No other thread may exist yet (no runtime, no logger thread): removing a variable is
/// unsound while another thread reads or writes the environment, as C libraries do
/// behind Rust's back (`std::env::remove_var` is `unsafe` from edition 2024). Call it
/// first thing in `main`, which is why images start their runtime by hand rather than
/// with `#[tokio::main]`.
#[allow(unsafe_code)] // an `unsafe fn` only for its caller's promise; its body is safe
pub unsafe fn take_environment() -> Environment {
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
