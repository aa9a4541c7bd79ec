//! What the workspace's test crates share, so that no test includes another crate's file:
//! [`mcp`] drives an engine with the official Python MCP client, [`refusal`] checks that
//! an engine refuses to start, [`hand_made`] registers tools and hooks by hand,
//! [`provider`] is a model provider double for engines run as processes, and [`llmock`]
//! runs the third-party provider mock the agent-turn tests use.

pub mod hand_made;
pub mod llmock;
pub mod mcp;
pub mod provider;
pub mod refusal;

use std::path::{Path, PathBuf};

/// The test venv's Python (`scripts/test` creates `.venv` with the pinned packages of
/// `tests/oracle/requirements.txt`), or `PLUGIN_SDK_PYTHON`; `needs` says what for.
pub fn python(needs: &str) -> PathBuf {
    let path = std::env::var_os("PLUGIN_SDK_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/python"));
    assert!(
        path.exists(),
        "{needs}: run `bash scripts/test` (it creates .venv), or set PLUGIN_SDK_PYTHON (looked for {})",
        path.display()
    );
    path
}

/// Whether `variable` (`UPDATE_SNAPSHOTS`, `TRYBUILD`) asks a test to rewrite the expected
/// output it compares against. Under CI (`CI` set) that is refused with a panic: there,
/// expected output is only ever read, so a run can never bless what it produced.
pub fn overwrite_requested(variable: &str) -> bool {
    overwrite_requested_in(variable, |name| std::env::var_os(name))
}

fn overwrite_requested_in(
    variable: &str,
    env: impl Fn(&str) -> Option<std::ffi::OsString>,
) -> bool {
    let requested = env(variable).is_some_and(|value| !value.is_empty());
    assert!(
        !(requested && env("CI").is_some()),
        "{variable} is set under CI: expected output is only rewritten on a developer's machine, then reviewed"
    );
    requested
}

/// The SDK, for the registrations [`hand_made`]'s macros expand to.
pub use plugin_sdk as sdk;

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use super::overwrite_requested_in;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<OsString> {
        move |name| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| OsString::from(value))
        }
    }

    #[test]
    fn an_overwrite_is_honoured_on_a_developers_machine_and_refused_under_ci() {
        assert!(overwrite_requested_in(
            "TRYBUILD",
            env(&[("TRYBUILD", "overwrite")])
        ));
        assert!(!overwrite_requested_in("TRYBUILD", env(&[("CI", "true")])));
        let refused = std::panic::catch_unwind(|| {
            overwrite_requested_in("TRYBUILD", env(&[("TRYBUILD", "overwrite"), ("CI", "1")]))
        });
        let message = refused.unwrap_err();
        let message = message.downcast_ref::<String>().unwrap();
        assert!(message.contains("TRYBUILD is set under CI"), "{message}");
    }
}
