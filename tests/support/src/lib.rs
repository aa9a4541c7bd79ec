//! What the workspace's test crates share, so that no test includes another crate's file:
//! [`mcp`] drives an engine with the official Python MCP client, and [`refusal`] checks
//! that an engine refuses to start.

pub mod mcp;
pub mod refusal;
