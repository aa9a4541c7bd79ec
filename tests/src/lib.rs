//! Workspace-level tests of the SDK: representative argument types whose schemas are
//! snapshot-tested and fed to the OpenAI Agents SDK's strict-schema check, the tools
//! those types make, and the compile-fail suite under `tests/ui`.

plugin_sdk::plugin! {
    namespace = "fixtures",
    engine = ">=0.1",
    display_name = "Schema fixtures",
}

pub mod fixtures;

/// The README's Rust snippets, compiled and run as this crate's doctests, so the first
/// thing a newcomer copies always builds.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeSnippets;
