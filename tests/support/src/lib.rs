//! What the workspace's test crates share, so that no test includes another crate's file:
//! [`mcp`] drives an engine with the official Python MCP client, [`refusal`] checks that
//! an engine refuses to start, and [`hand_made`] registers tools and hooks by hand.

pub mod hand_made;
pub mod mcp;
pub mod refusal;

/// The SDK, for the registrations [`hand_made`]'s macros expand to.
pub use plugin_sdk as sdk;
