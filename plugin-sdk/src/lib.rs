#![doc = include_str!("../docs/crate.md")]
#![forbid(unsafe_code)]
#![warn(missing_docs)]
// Without the `engine` feature the engine's side of the contract is unreachable, and so
// is much of what only it uses: the build with the feature (the workspace's) is the one
// whose unused code is a warning.
#![cfg_attr(not(feature = "engine"), allow(unused_imports, dead_code))]

pub mod action;
pub mod channel;
mod context;
mod error;
mod future;

/// The authors' guide, whose examples compile as this crate's doctests.
#[doc = include_str!("../docs/guide.md")]
pub mod guide {
    /// Staged actions and channels: writing them, and what the engine does with them.
    #[doc = include_str!("../docs/actions-and-channels.md")]
    pub mod actions_and_channels {}
    /// OAuth for tools: a plugin's providers, an agent's clients, the engine's broker.
    #[doc = include_str!("../docs/oauth.md")]
    pub mod oauth {}
}
pub mod hook;
mod json_path;
mod localized;
mod output;
mod param;
mod plugin;
mod schema;
mod strict;
mod strict_check;
mod strict_read;
mod tool;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

pub use context::ToolContext;
pub use error::{ToolError, ToolErrorKind};
pub use strict::{StrictSchema, ToolArgs};

#[doc = include_str!("../docs/define_tool.md")]
pub use plugin_sdk_macros::define_tool;

#[doc = include_str!("../docs/define_action.md")]
pub use plugin_sdk_macros::define_action;

#[doc = include_str!("../docs/define_channel.md")]
pub use plugin_sdk_macros::define_channel;

#[doc = include_str!("../docs/define_hook.md")]
pub use plugin_sdk_macros::define_hook;

#[doc = include_str!("../docs/plugin.md")]
pub use plugin_sdk_macros::plugin;

#[doc = include_str!("../docs/tool_args.md")]
pub use plugin_sdk_macros::ToolArgs;

#[doc = include_str!("../docs/secrets.md")]
pub use plugin_sdk_macros::Secrets;

// Names the crate's own modules use; the public path of each is in a module below.
pub(crate) use future::BoxFuture;
pub(crate) use localized::LocalizedText;
pub(crate) use param::CallInput;
pub(crate) use plugin::PluginManifest;

/// The secrets a tool declares: a `#[derive(Secrets)]` struct of [`Secret`](secrets::Secret)
/// fields, taken as a parameter.
pub mod secrets {
    pub use crate::context::{Secret, SecretKind};
}

/// The audit logger: take `audit: &Audit` to record what a tool did, with secrets redacted.
pub mod audit {
    pub use crate::context::Audit;
}

/// The call's abort signal: take `abort: &Abort` to stop long work nobody waits for.
pub mod abort {
    pub use crate::context::{Abort, Aborted};
}

/// The conversation's state: take `state: &State` to keep values between calls.
pub mod state {
    pub use crate::context::State;
}

/// Files handed between the tools of one conversation: take `artifacts: &Artifacts`.
pub mod artifacts {
    pub use crate::context::{Artifact, ArtifactError, ArtifactHandle, Artifacts};
}

/// The agent's knowledge base, at a level: take `Knowledge<Read>` (or `Write`, `Manage`),
/// or `Option<Knowledge<..>>` for a tool that works without it.
pub mod knowledge {
    pub use crate::context::{
        CanWrite, Document, DocumentSummary, Knowledge, KnowledgeError, KnowledgeLevel, Level,
        ListCursor, Listing, Manage, Mutation, Origin, Read, Refusal, SearchError, SearchHit,
        Write, Written,
    };
}

/// OAuth 2 for tools: declare providers in `plugin! { oauth = { ... } }` and take
/// `oauth: &OAuth` for the subscriber's access token.
pub mod oauth {
    pub use crate::context::{AccessToken, OAuth, OAuthError, OAuthProvider};
}

/// Model access by tier: take `model: Option<Model>`, `None` when the agent grants none.
pub mod model {
    pub use crate::context::{
        ChatMessage, ChatReply, ChatRequest, Model, ModelError, Role, SpendCap, Tier,
    };
}

/// The agent's project root, for tools that work on its files.
pub mod project {
    pub use crate::context::{Project, ProjectLimits};
}

/// A plugin's settings and the state built from them once per agent: declare it in
/// `plugin! { state = T }` with [`PluginState`](shared::PluginState), take it as
/// [`Shared<T>`](shared::Shared).
pub mod shared {
    pub use crate::context::{PluginState, Shared};
}

/// Who the turn is for and where it runs, from the engine and never from the model:
/// take `Subscriber`, `Conversation`, `Instance`, `AgentName` or `TurnChannel`.
pub mod turn {
    pub use crate::context::{AgentName, Conversation, Instance, Subscriber, TurnChannel};
}

/// The conversation's history, read-only: take `history: History`.
pub mod history {
    pub use crate::context::{
        History, HistoryCursor, HistoryError, HistoryMessage, HistoryPage, HistoryRole,
        HistorySnapshot, HistorySource, RecentMessages, ToolCallSummary,
    };
}

/// The engine's side of the contract: what `#[define_tool]`, `#[define_hook]` and
/// `plugin!` register, how the engine runs it, and the stores it hands to tools.
///
/// For engine crates (`engine-core`), behind the `engine` feature: a plugin author never
/// needs it, and a plugin crate built on its own cannot reach it.
#[cfg(feature = "engine")]
pub mod engine {
    pub use crate::context::{
        dotted_key, ArtifactStore, AuditSink, CallIdentity, FromSecret, KnowledgeGrant,
        KnowledgeNeed, KnowledgeStore, ModelAccess, OAuthBroker, Redact, RedactValues, Scope,
        SecretBundle, SecretSpec, SettingsProblem, StateBuilder, StateMap, StateType, StateWrites,
    };
    pub use crate::future::BoxFuture;
    pub use crate::hook::registration::{
        linked_hooks, AsyncHookFn, HookDescriptor, HookEntry, HookEvent, HookHandler, HookInput,
        HookParam, HookResult, ReadyHookFn,
    };
    pub use crate::localized::LocalizedText;
    pub use crate::output::{IntoToolResult, ToolOutput};
    pub use crate::param::{CallInput, Needs, ToolParam};
    pub use crate::plugin::{linked_plugins, Catalogue, Icon, PluginManifest, System};
    pub use crate::tool::{
        linked_tools, CallFn, ReadyFn, SourceLocation, StageFn, ToolAnnotations, ToolDescriptor,
        ToolEntry,
    };

    /// Schemas as the engine checks and renders them.
    pub mod schema {
        pub use crate::schema::{check_strict, empty_object_schema, make_canonical, Violation};
    }
}

/// What a plugin module usually needs, in one import. It glob-imports cleanly beside
/// `std::io::prelude::*`: the knowledge levels (`Read`, `Write`, `Manage`) are in
/// [`knowledge`], not here.
pub mod prelude {
    pub use crate::abort::Abort;
    pub use crate::action::Note;
    pub use crate::artifacts::{ArtifactHandle, Artifacts};
    pub use crate::audit::Audit;
    pub use crate::history::{History, RecentMessages};
    pub use crate::hook::{
        ConversationStart, MessageReceived, PreModelOutcome, ResponseGenerated, ResponseOutcome,
        ResponseSent,
    };
    pub use crate::knowledge::Knowledge;
    pub use crate::model::{ChatMessage, ChatRequest, Model, Tier};
    pub use crate::oauth::OAuth;
    pub use crate::secrets::Secret;
    pub use crate::shared::{PluginState, Shared};
    pub use crate::state::State;
    pub use crate::turn::{AgentName, Conversation, Instance, Subscriber, TurnChannel};
    pub use crate::{
        define_action, define_hook, define_tool, Secrets, ToolArgs, ToolContext, ToolError,
    };
    pub use schemars::JsonSchema;
    pub use serde::{Deserialize, Serialize};
}
