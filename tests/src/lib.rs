//! Workspace-level tests of the SDK: representative argument types whose schemas are
//! snapshot-tested and fed to the OpenAI Agents SDK's strict-schema check, the tools
//! those types make, and the compile-fail suite under `tests/ui`.

plugin_sdk::plugin! {
    namespace = "fixtures",
    engine = ">=0.1",
    display_name = "Schema fixtures",
}

pub mod fixtures;

/// The Rust snippets of README.md and of every guide in docs/, compiled and run as this
/// crate's doctests, so that what a newcomer copies always builds (`docs.rs` checks that
/// every guide is here).
#[cfg(doctest)]
pub mod guides {
    #[doc = include_str!("../../README.md")]
    pub struct Readme;
    #[doc = include_str!("../../docs/actions-and-channels.md")]
    pub struct ActionsAndChannels;
    #[doc = include_str!("../../docs/authors.md")]
    pub struct Authors;
    #[doc = include_str!("../../docs/builtin-tools.md")]
    pub struct BuiltinTools;
    #[doc = include_str!("../../docs/decisions.md")]
    pub struct Decisions;
    #[doc = include_str!("../../docs/external-tools.md")]
    pub struct ExternalTools;
    #[doc = include_str!("../../docs/images.md")]
    pub struct Images;
    #[doc = include_str!("../../docs/mcp-clients.md")]
    pub struct McpClients;
    #[doc = include_str!("../../docs/replicas.md")]
    pub struct Replicas;
    #[doc = include_str!("../../docs/testing.md")]
    pub struct Testing;
    #[doc = include_str!("../../docs/turns.md")]
    pub struct Turns;
}
