#![doc = include_str!("../docs/crate.md")]
// `deny`, not `forbid`, and two allowances: `config::take_environment` is an `unsafe fn`
// (its caller promises that no other thread exists), and a unit-test build's counting
// allocator (`stores::held_bytes`).
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod agent;
mod backend_error;
mod builtins;
mod catalog;
pub mod config;
pub mod conversation;
pub mod dev;
mod dispatch;
mod engine;
mod equip;
pub mod external;
mod format;
mod gemini;
/// Agent turns and providers, for the people who configure and run them.
#[doc = include_str!("../docs/turns.md")]
pub mod guide {}
mod hooks;
mod limits;
pub mod model;
pub mod oauth;
mod outcome;
mod parallel;
pub mod provider;
mod redact;
mod registry;
pub mod stores;
mod system;
mod tool;
mod turn;
mod validate;
pub mod wire;

pub use agent::Agent;
pub use backend_error::BackendError;
pub use builtins::{BUILTIN_NAMESPACE, BUILTIN_PACKAGE, BUILTIN_TOOL_NAMES, RESERVED_NAMESPACES};
pub use conversation::{ANONYMOUS_SUBSCRIBER, API_CHANNEL, CLI_CHANNEL};
pub use dispatch::{CallError, CallErrorKind};
pub use engine::{
    Backends, DevSession, Engine, EngineBuilder, EngineError, OpenConversations, OpenGateway,
    OpenKnowledge, OpenPanelSecrets, OpenProvider, OpenShared, Reloaded, Session, SharedStores,
    UnknownAgent,
};
pub use equip::LeftOut;
pub use format::{Format, UnknownFormat};
pub use hooks::Hook;
pub use limits::Limits;
pub use outcome::{Limit, Stop, TurnSummary};
pub use redact::{
    install_redacting_panic_hook, redactor, redactor_with, LogRedaction, RedactingWriter,
};
pub use system::{SystemRequirements, VariableConflict, VariableDefault};
pub use tool::Tool;
pub use turn::attachments::{Attachment, AttachmentError};
pub use turn::{Call, CallFuture, ModelInput, Turn, TurnControl, TurnEnd, TurnEvent, TurnOutcome};
pub use validate::{Problem, Rule, StartupError, ENGINE_VERSION};

// What an engine needs to call tools, so that an engine image depends on one crate.
pub use bytes::Bytes;
pub use tokio::time::Instant;
pub use tokio_util::sync::CancellationToken;
