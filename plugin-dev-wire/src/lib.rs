//! The dev bridge's wire protocol (dev mode, the `plugin-dev` crate), version
//! [`PROTOCOL`]: typed JSON frames, one per WebSocket text message, each at most
//! [`MAX_FRAME_BYTES`].
//!
//! The author's process opens `GET /v1/dev/agents/{agent}` on `engine serve` with its dev
//! token as `Authorization: Bearer …`, and sends [`ToEngine::Hello`] with what it serves.
//! The engine answers [`ToAuthor::Welcome`] (which tools the agent equips, which it
//! refuses and why), then sends a [`ToAuthor::Call`] for each call the agent's turns make
//! of a session tool, and two for a staged action's: the stage, which checks its
//! arguments, and the perform after the reply ([`ActionStep`]). While a call runs, the
//! author's side asks the engine for what the call's context reaches ([`ToEngine::Ask`]:
//! an artifact, the knowledge base, a model), writes audit records ([`ToEngine::Audit`]),
//! and ends the call with [`ToEngine::Done`]: the output and the state it wrote, or an
//! error. [`ToAuthor::Cancel`] says the engine stopped waiting (the deadline passed, the
//! turn was abandoned). [`ToEngine::Update`] replaces what the session serves (the watch
//! loop), answered by another welcome.
//!
//! A frame that does not parse, one larger than [`MAX_FRAME_BYTES`], another protocol
//! version, or a frame about a call or question never made closes the session, with a
//! close frame whose reason both sides log. A frame about a call that has ended (a late
//! end, an answer to a question dropped with its call) is ignored.
//!
//! JSON values travel as values, never as raw text: a frame's type is a field of the
//! frame (`"type": "call"`), which serde reads into a buffer first, and a raw value does
//! not survive the buffer.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod hooks;

use std::collections::BTreeMap;

use plugin_sdk::history::RecentMessages;
use plugin_sdk::knowledge::{KnowledgeLevel, ListCursor};
use plugin_sdk::model::ChatRequest;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use hooks::{event_named, Binding, EventPayload, HookDecl, HookOutcome, WireEvent};

/// The protocol's version: both sides send it, and a session of another is closed.
/// Version 2 added where a call runs (`CallFrame::identity`) and the conversation's
/// history (`recent_messages`); version 3 a knowledge listing's cursor
/// (`list_documents`' `after`, answered with a `Listing`) and a document's `origin_ref`.
pub const PROTOCOL: u32 = 3;

/// The largest frame either side sends or accepts, in bytes (seed 003's
/// `MAX_DEV_FRAME_BYTES`).
pub const MAX_FRAME_BYTES: usize = 1 << 20;

/// The route of a session, below the engine's address.
pub fn route(agent: &str) -> String {
    format!("/v1/dev/agents/{agent}")
}

/// A frame from the author's process to the engine.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ToEngine {
    /// The first frame: the protocol and what the process serves.
    Hello {
        /// [`PROTOCOL`].
        protocol: u32,
        /// Its tools.
        tools: Vec<ToolDecl>,
        /// Its hooks.
        hooks: Vec<HookDecl>,
    },
    /// Replaces what the session serves (after a rebuild), without closing it.
    Update {
        /// Its tools now.
        tools: Vec<ToolDecl>,
        /// Its hooks now.
        hooks: Vec<HookDecl>,
    },
    /// A question of the running call `call`, answered by [`ToAuthor::Answer`].
    Ask {
        /// The call.
        call: u64,
        /// The question's number, unique within the call.
        ask: u64,
        /// What it asks.
        question: Question,
    },
    /// An audit record of the running call `call`, redacted of its own secrets; the
    /// engine redacts it again and writes it.
    Audit {
        /// The call.
        call: u64,
        /// The event's name.
        event: String,
        /// Its detail, as JSON text.
        detail: String,
    },
    /// The end of the call `call`.
    Done {
        /// The call.
        call: u64,
        /// How it ended.
        outcome: Outcome,
    },
}

/// A frame from the engine to the author's process.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ToAuthor {
    /// The answer to [`ToEngine::Hello`] or [`ToEngine::Update`].
    Welcome {
        /// [`PROTOCOL`].
        protocol: u32,
        /// The session's id, as the turns' events name it.
        session: String,
        /// The agent.
        agent: String,
        /// The ids of the tools the agent equips from the session.
        equipped: Vec<String>,
        /// The ids of the hooks the agent runs from it: an override's is the hook it
        /// replaces, a bound hook's its bare name.
        hooks: Vec<String>,
        /// The tools and hooks it does not, and why.
        refused: Vec<Refused>,
    },
    /// A call of a session tool or hook, or a step of a session action.
    Call(Box<CallFrame>),
    /// The engine no longer waits for the call `call`: its deadline passed, or its turn
    /// was abandoned. The call's code sees it as its abort signal.
    Cancel {
        /// The call.
        call: u64,
    },
    /// The answer to a question.
    Answer {
        /// The call.
        call: u64,
        /// The question.
        ask: u64,
        /// What the engine answers.
        answer: Answer,
    },
}

/// A tool the author's process serves, as its linked descriptor declares it.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolDecl {
    /// Its plugin's namespace.
    pub namespace: String,
    /// Its name within the namespace.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// Its summary for people, in English.
    pub summary: String,
    /// Its grouping id.
    pub category: Option<String>,
    /// The JSON Schema of its arguments.
    pub input_schema: Value,
    /// Whether the schema is strict (`#[define_tool(strict = false)]` says not).
    pub strict: bool,
    /// Whether a call of it runs alone in its step.
    pub exclusive: bool,
    /// Whether it is a staged action (`#[define_action]`).
    pub action: bool,
    /// What of the context its parameters read.
    pub needs: NeedsDecl,
    /// The secrets it declares.
    pub secrets: Vec<SecretDecl>,
}

/// What of the context a tool reads, as its parameters declare it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NeedsDecl {
    /// The conversation: its identity, state and artifacts.
    pub conversation: bool,
    /// Model access.
    pub model: bool,
    /// The audit logger.
    pub audit: bool,
    /// The agent's project root (which a session cannot reach).
    pub project: bool,
    /// Its plugin's state (`Shared<T>`), which the author's process builds.
    pub plugin_state: bool,
    /// The knowledge level it needs, and whether it needs it (not an `Option`).
    pub knowledge: Option<(KnowledgeLevel, bool)>,
    /// The engine instance, the agent and the turn's channel.
    pub identity: bool,
    /// The conversation's history.
    pub history: bool,
    /// The subscriber's OAuth grants (which the engine does not hand a session).
    #[serde(default)]
    pub oauth: bool,
}

/// A secret a tool declares.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecretDecl {
    /// Its key, as an agent configures it.
    pub key: String,
}

/// A tool the agent does not equip from the session, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Refused {
    /// The tool's id, `<namespace>:<name>`.
    pub tool: String,
    /// Why, with the fix.
    pub why: String,
}

/// A call of a session tool or hook, with what its context holds.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallFrame {
    /// The call's number in the session.
    pub call: u64,
    /// The tool's or hook's id, as its process declared it.
    pub tool: String,
    /// For a hook, its event: the arguments are then the event's [`EventPayload`], and
    /// the output a [`HookOutcome`].
    pub event: Option<String>,
    /// For a staged action, which of its two calls this is; `None` for a tool or hook.
    pub step: Option<ActionStep>,
    /// The arguments, as the model sent them (JSON text).
    pub arguments: String,
    /// The reader's locale, when the engine knows it.
    pub locale: Option<String>,
    /// The subscriber and the conversation, for a tool that reads them.
    pub turn: Option<TurnDecl>,
    /// Where the call runs, for a tool that reads it.
    pub identity: Option<IdentityDecl>,
    /// The secrets the tool declares and the agent configures, and no other.
    pub secrets: Vec<SecretValue>,
    /// The conversation's state when the call started, for a tool that reads it.
    pub state: Option<BTreeMap<String, Value>>,
    /// The settings the agent gives the tool's plugin, for a tool that takes its state.
    pub settings: Option<Value>,
    /// The milliseconds left before the engine stops waiting.
    pub deadline_ms: u64,
    /// What else the engine answers questions about in this call.
    pub grants: Grants,
}

/// The two calls of a staged action (`#[define_action]`): the model's call stages it,
/// and the turn performs it once its reply has passed the guardrails.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionStep {
    /// Check the arguments as the action's own types read them, running nothing: an
    /// empty output (`null`) when they fit, else an `invalid_arguments` error.
    Stage,
    /// Run the action's body with the arguments the stage checked.
    Perform,
}

/// The turn a call belongs to.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TurnDecl {
    /// The end user's id.
    pub subscriber: String,
    /// The conversation's id.
    pub conversation: String,
}

/// Where a call runs.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdentityDecl {
    /// The engine instance's slug.
    pub instance: String,
    /// The agent's name.
    pub agent: String,
    /// The channel the turn came through, when known.
    pub channel: Option<ChannelDecl>,
}

/// The channel a turn came through.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChannelDecl {
    /// The channel's name.
    pub name: String,
    /// The conversation's id, as the channel gave it.
    pub conversation: String,
}

/// A secret's value, given with a call.
#[derive(Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecretValue {
    /// Its key.
    pub key: String,
    /// Its value.
    pub value: String,
    /// Whether it is one of the choices a `select` secret publishes (not redacted).
    pub chosen: bool,
}

impl std::fmt::Debug for SecretValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecretValue")
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

/// What the engine answers questions about in one call: the pieces of the context the
/// tool reads and the agent grants.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Grants {
    /// The conversation's artifacts.
    pub artifacts: bool,
    /// The audit log.
    pub audit: bool,
    /// Model access.
    pub model: bool,
    /// The agent's knowledge base, at this level.
    pub knowledge: Option<KnowledgeLevel>,
    /// The conversation's history.
    pub history: bool,
}

/// A question a running call asks the engine.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "ask", rename_all = "snake_case", deny_unknown_fields)]
pub enum Question {
    /// Keep an artifact in the call's conversation.
    PutArtifact {
        /// Its file name.
        filename: String,
        /// Its MIME type.
        mime: String,
        /// Its bytes, in standard base64.
        base64: String,
        /// How long to keep it at most, in milliseconds.
        ttl_ms: Option<u64>,
    },
    /// Take an artifact of the call's conversation.
    TakeArtifact {
        /// Its handle.
        handle: String,
    },
    /// Ask the agent's model, through the engine's gateway and spend caps.
    Chat {
        /// The request.
        request: ChatRequest,
    },
    /// Search the agent's knowledge base.
    Search {
        /// At this level.
        level: KnowledgeLevel,
        /// The query.
        query: String,
        /// The most hits.
        limit: usize,
    },
    /// Get a document.
    GetDocument {
        /// At this level.
        level: KnowledgeLevel,
        /// Its id.
        id: i64,
    },
    /// List the documents, a page at a time.
    ListDocuments {
        /// At this level.
        level: KnowledgeLevel,
        /// The most documents.
        limit: usize,
        /// Where the page starts: the `next` of the page before.
        after: Option<ListCursor>,
    },
    /// Write a document.
    WriteDocument {
        /// At this level.
        level: KnowledgeLevel,
        /// Its file name.
        filename: String,
        /// Its content.
        content: String,
    },
    /// Delete a document.
    DeleteDocument {
        /// At this level.
        level: KnowledgeLevel,
        /// Its id.
        id: i64,
    },
    /// Read a page of the conversation's history.
    RecentMessages {
        /// Which page.
        options: RecentMessages,
    },
}

/// The engine's answer to a [`Question`]: JSON as the context's own types serialize, or
/// why there is none.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Answer {
    /// What was asked, as JSON (an artifact's handle, a document, a reply...).
    Ok(Value),
    /// Why not, in words for the tool, and its kind when the tool's API has one.
    Refused {
        /// The failure's kind (`too_large`, `store_full`, `spend_cap`, …), or `other`.
        kind: String,
        /// The message.
        message: String,
    },
}

/// How a call ended.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Outcome {
    /// Its output (JSON text) and the state it wrote, which the engine keeps only now.
    Ok {
        /// The output.
        output: String,
        /// The state writes: a key set to a value, or removed (`null`).
        state_writes: BTreeMap<String, Option<Value>>,
    },
    /// It failed: its kind (`invalid_arguments`, `failed`, `output`, `panicked`, or
    /// `disconnected` when the process that ran it went away) and its message for the
    /// model.
    Err {
        /// The kind.
        kind: String,
        /// The message.
        message: String,
    },
}

/// `reason` cut to what a WebSocket close frame carries (123 bytes), at a character's
/// boundary.
pub fn close_reason(reason: &str) -> &str {
    let mut end = reason.len().min(123);
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    &reason[..end]
}

/// State writes as the wire carries them, as the state keeps them.
pub fn state_writes(writes: BTreeMap<String, Option<Value>>) -> plugin_sdk::engine::StateWrites {
    writes
        .into_iter()
        .map(|(key, value)| {
            let value = value.map(|value| {
                serde_json::value::to_raw_value(&value).expect("a JSON value always serializes")
            });
            (key, value)
        })
        .collect()
}
