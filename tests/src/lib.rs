//! Workspace-level tests of the SDK: representative argument types whose schemas are
//! snapshot-tested and fed to the OpenAI Agents SDK's strict-schema check, the tools
//! those types make, and the compile-fail suite under `tests/ui`.

plugin_sdk::plugin! {
    namespace = "fixtures",
    engine = ">=0.1",
    display_name = "Schema fixtures",
}

pub mod fixtures;

/// The Rust snippets of README.md and of the project's own pages in docs/, compiled and
/// run as this crate's doctests, so that what a newcomer copies always builds (`docs.rs`
/// checks that every page is here). Each crate's guide is a doctest of its crate.
#[cfg(doctest)]
pub mod guides {
    #[doc = include_str!("../../README.md")]
    pub struct Readme;
    #[doc = include_str!("../../docs/decisions.md")]
    pub struct Decisions;
    #[doc = include_str!("../../docs/testing.md")]
    pub struct Testing;
}
