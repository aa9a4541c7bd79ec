//! The engine side of the SDK: what an engine image links, validated and served.
//!
//! An engine image depends on `engine-core` and on the plugin crates it ships, and names
//! each plugin crate once (`use acme_crm as _;`) so the linker keeps it. At start-up,
//! [`Registry::linked`] collects every registration, refuses to start on any problem
//! (reporting all of them), renders the catalogs, and then dispatches calls.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use engine_core::{Call, Format, Registry};
//! use plugin_sdk::ToolContext;
//!
//! let registry = Registry::linked()?;
//! let catalog = registry.catalog(Format::OpenAi, "en-US"); // bytes, rendered once
//! let context = ToolContext::new();
//! let output = registry
//!     .call(Call::new("weather__weather", r#"{"city":"Rome","days":3,"units":null}"#, &context))
//!     .await?;
//! # Ok(()) }
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod builtins;
mod catalog;
pub mod config;
mod context;
mod dispatch;
mod hooks;
mod parallel;
mod redact;
mod registry;
mod validate;
pub mod wire;

pub use builtins::{BUILTIN_TOOL_NAMES, RESERVED_NAMESPACES};
pub use catalog::Format;
pub use config::{AgentConfig, EngineConfig};
pub use context::artifacts::MemoryArtifacts;
pub use context::knowledge::SqliteKnowledge;
pub use context::model::{GatewayReply, ModelCall, ModelGateway, TurnSpend};
pub use context::openai_gateway::OpenAiCompatibleGateway;
pub use context::{redactor, Agent, AgentTurn, Engine, LeftOut, Stores, ToolCall, UnknownAgent};
pub use dispatch::{Call, CallError, CallErrorKind, CallFuture};
pub use hooks::{
    Halt, Hook, Hooks, ModelInput, PreModel, Regeneration, Replacement, ResponsePass, TurnEnd,
    TurnOutcome,
};
pub use redact::RedactingWriter;
pub use registry::{Limits, Linked, Registry, Tool};
pub use validate::{Problem, Rule, StartupError, ENGINE_VERSION};

// What an engine needs to call tools, so that an engine image depends on one crate.
pub use bytes::Bytes;
pub use tokio_util::sync::CancellationToken;
