//! Write tools for an agent engine that links them statically.
//!
//! A plugin crate depends on `plugin-sdk`, `serde` and `schemars`, declares itself once
//! with [`plugin!`], and annotates `async fn`s with [`define_tool`]. Each tool's arguments
//! are a struct with `#[derive(Deserialize, JsonSchema, ToolArgs)]`, checked at compile
//! time against the strict-mode rules every model provider accepts. Linking the crate
//! into an engine is what installs it: no list to keep anywhere.
//!
//! ```
//! use plugin_sdk::prelude::*;
//!
//! plugin_sdk::plugin! {
//!     namespace = "acme",
//!     engine = ">=0.1, <2",
//!     display_name = "Acme",
//! }
//!
//! #[derive(Deserialize, JsonSchema, ToolArgs)]
//! struct Lookup {
//!     /// The order number, as printed on the receipt.
//!     order: String,
//! }
//!
//! #[derive(Serialize, JsonSchema)]
//! struct Status {
//!     shipped: bool,
//! }
//!
//! /// Look up whether an order has shipped.
//! #[define_tool(summary = { "en-US": "Order status", "it-IT": "Stato dell'ordine" }, read_only)]
//! async fn order_status(args: Lookup) -> Result<Status, ToolError> {
//!     Ok(Status { shipped: args.order.starts_with('S') })
//! }
//! # fn main() {}
//! ```
//!
//! See the README of the repository for every attribute and the strict-mode rules.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod context;
mod error;
pub mod hook;
mod json_path;
mod localized;
mod output;
mod param;
mod plugin;
pub mod schema;
mod strict;
mod tool;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

pub use context::{
    Artifact, ArtifactError, ArtifactHandle, ArtifactStore, Artifacts, Audit, CanWrite,
    ChatMessage, ChatReply, ChatRequest, Conversation, Document, DocumentSummary, FromSecret,
    Knowledge, KnowledgeError, KnowledgeGrant, KnowledgeLevel, KnowledgeNeed, KnowledgeStore,
    Level, Manage, Model, ModelAccess, ModelError, Mutation, Read, Redact, RedactValues, Refusal,
    Role, Scope, SearchHit, Secret, SecretBundle, SecretSpec, State, StateMap, StateWrites,
    Subscriber, Tier, ToolContext, TurnIdentity, Write, Written,
};
pub use error::{ToolError, ToolErrorKind};
pub use hook::{linked_hooks, HookDescriptor};
pub use localized::LocalizedText;
pub use output::{IntoToolResult, ToolOutput};
pub use param::{CallInput, ToolParam};
pub use plugin::{linked_plugins, PluginManifest};
pub use strict::{StrictSchema, ToolArgs};
pub use tool::{
    linked_tools, BoxFuture, CallFn, ReadyFn, SourceLocation, ToolAnnotations, ToolDescriptor,
    ToolEntry,
};

pub use plugin_sdk_macros::{define_hook, define_tool, plugin, Secrets, ToolArgs};

/// What a plugin module usually needs, in one import.
pub mod prelude {
    pub use crate::hook::{
        ConversationStart, MessageReceived, PreModelOutcome, ResponseGenerated, ResponseOutcome,
        ResponseSent,
    };
    pub use crate::{
        define_hook, define_tool, ArtifactHandle, Artifacts, Audit, ChatMessage, ChatRequest,
        Conversation, Knowledge, Manage, Model, Read, Secret, Secrets, State, Subscriber, Tier,
        ToolArgs, ToolContext, ToolError, Write,
    };
    pub use schemars::JsonSchema;
    pub use serde::{Deserialize, Serialize};
}
