//! What the workspace's test crates share, so that no test includes another crate's file:
//! [`mcp`] drives an engine with the official Python MCP client, [`refusal`] checks that
//! an engine refuses to start, [`hand_made`] registers tools and hooks by hand, and
//! [`provider`] is a model provider double for engines run as processes.

pub mod hand_made;
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

/// The SDK, for the registrations [`hand_made`]'s macros expand to.
pub use plugin_sdk as sdk;
