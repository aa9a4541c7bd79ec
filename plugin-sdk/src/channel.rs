//! Channels, at **API version 0 (unstable)**: adapters between a channel (a webhook, a
//! messaging platform) and the engine's turn, mounted by `engine serve` at
//! `/channels/<name>`.
//!
//! A channel turns an inbound HTTP request into a turn (which conversation, for whom,
//! what they said) and the finished turn into the channel's response. The engine does
//! the rest, as on its own turn route: the bearer token, the agent's limits, budget and
//! deadline, the staged actions.
//!
//! **Unstable:** this half of the plugin API is published at version 0 and may change in
//! any minor release until a second adapter has been built against it (a port validated
//! by one adapter is a guess at the right seam). A plugin that defines a channel declares
//! `api_version = 0` in `plugin!`, and an engine refuses to start with a version it does
//! not support.

use crate::PluginManifest;

/// An adapter between a channel and the engine's turn. Define it on a unit struct with
/// `#[define_channel(name = "...")]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is a channel but does not implement `Channel`",
    label = "no `impl Channel for {Self}`",
    note = "implement `plugin_sdk::channel::Channel`: `inbound` reads a request into a turn (conversation, subscriber, message), `respond` answers the finished turn"
)]
pub trait Channel: Send + Sync + 'static {
    /// Reads an inbound request: the turn it asks for, or the response that refuses it
    /// (a bad signature, a body the channel does not understand).
    fn inbound(&self, request: &ChannelRequest) -> Result<Inbound, ChannelResponse>;

    /// The channel's response to a finished turn.
    fn respond(&self, finished: &FinishedTurn) -> ChannelResponse;
}

/// An inbound request to `/channels/<name>`: its headers and body. The engine has
/// checked its bearer token and bounded its size.
#[derive(Clone, Debug)]
pub struct ChannelRequest {
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl ChannelRequest {
    /// A request with `headers` (names in lower case) and `body`: the engine builds it,
    /// and tests of a channel do.
    pub fn new(headers: Vec<(String, String)>, body: Vec<u8>) -> Self {
        Self { headers, body }
    }

    /// The value of the header `name` (case-insensitive), when present and text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(held, _)| held.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// The body's bytes.
    pub fn body(&self) -> &[u8] {
        &self.body
    }
}

/// The turn an inbound request asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inbound {
    /// The conversation, in the channel's ids: the engine keeps one history per id.
    pub conversation: String,
    /// The end user, in the channel's ids: what an action's `Subscriber` receives.
    pub subscriber: String,
    /// What they said.
    pub message: String,
    /// Their locale (a BCP 47 tag), when the channel knows it.
    pub locale: Option<String>,
    /// The files they sent with it. The engine checks them against its
    /// `[attachments]` limits (a request with one it refuses gets a 4xx, and nothing is
    /// kept), keeps each as an artifact of the conversation and tells the model.
    pub attachments: Vec<Attachment>,
}

/// A file sent with a message, on a channel or the turn route.
#[derive(Clone, PartialEq, Eq)]
pub struct Attachment {
    /// Its name, such as `invoice.pdf`: no path, no control characters.
    pub filename: String,
    /// Its media type, such as `application/pdf`.
    pub media_type: String,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

impl std::fmt::Debug for Attachment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // A file's bytes are the user's: a debug line names the file, not what it holds.
        f.debug_struct("Attachment")
            .field("filename", &self.filename)
            .field("media_type", &self.media_type)
            .field("bytes", &self.bytes.len())
            .finish()
    }
}

/// A finished turn, as a channel answers it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FinishedTurn {
    /// The conversation.
    pub conversation: String,
    /// The reply to send (empty when the turn ended without one).
    pub reply: String,
    /// Why the turn ended, as the turn route's `done` event names it (`answered`,
    /// `limit`, `deadline`, `replaced`, `provider_error`, ...).
    pub stop: String,
    /// What became of each action the turn staged.
    pub actions: Vec<ActionReport>,
}

/// What became of one staged action.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActionReport {
    /// The action's id (`acme:log_contact`).
    pub action: String,
    /// `performed`, `failed`, `unknown` or `dropped`.
    pub outcome: String,
}

/// What a channel sends back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChannelResponse {
    /// The HTTP status.
    pub status: u16,
    /// The `Content-Type`.
    pub content_type: String,
    /// The body.
    pub body: Vec<u8>,
}

impl ChannelResponse {
    /// `value` as JSON with `status`.
    pub fn json(status: u16, value: &impl serde::Serialize) -> Self {
        Self {
            status,
            content_type: "application/json".into(),
            body: serde_json::to_vec(value).expect("a channel's response serializes"),
        }
    }

    /// `text` as plain text with `status`.
    pub fn text(status: u16, text: impl Into<String>) -> Self {
        Self {
            status,
            content_type: "text/plain; charset=utf-8".into(),
            body: text.into().into_bytes(),
        }
    }
}

/// A channel, as `#[define_channel]` registers it.
pub struct ChannelDescriptor {
    /// Its name: the path `/channels/<name>`, unique among the linked channels.
    pub name: &'static str,
    /// What it is for: the struct's doc comment.
    pub description: &'static str,
    /// The manifest of the plugin that defines it.
    pub plugin: fn() -> &'static PluginManifest,
    /// The adapter.
    pub adapter: &'static dyn Channel,
    /// Where it is defined, for messages at start-up.
    pub location: crate::tool::SourceLocation,
}

inventory::collect!(ChannelDescriptor);

/// Every channel linked into this binary, in link order.
pub fn linked_channels() -> impl Iterator<Item = &'static ChannelDescriptor> {
    inventory::iter::<ChannelDescriptor>.into_iter()
}
