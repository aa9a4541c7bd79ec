//! The four events a hook runs at, each with its own payload.
//!
//! Payloads are built by the engine (and by an author's unit tests) through their
//! constructors; a hook reads them through accessors, so new fields never break a plugin.

/// The conversation a turn belongs to, and the locale of the person it is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Turn {
    conversation: String,
    locale: Option<String>,
}

impl Turn {
    /// A turn of `conversation` (the engine's id for it).
    pub fn new(conversation: impl Into<String>) -> Self {
        Self {
            conversation: conversation.into(),
            locale: None,
        }
    }

    /// The same turn, for a reader of `locale` (a BCP 47 tag).
    pub fn with_locale(mut self, locale: impl Into<String>) -> Self {
        self.locale = Some(locale.into());
        self
    }

    /// The conversation's id.
    pub fn conversation(&self) -> &str {
        &self.conversation
    }

    /// The locale of the person the turn is for, when the engine knows it.
    pub fn locale(&self) -> Option<&str> {
        self.locale.as_deref()
    }
}

/// Which event a hook runs at, for listings and logs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Event {
    /// The first turn of a conversation, before the model.
    ConversationStart,
    /// Every turn, before the model.
    MessageReceived,
    /// The model replied; the reply has not been sent.
    ResponseGenerated,
    /// The reply was sent.
    ResponseSent,
}

impl Event {
    /// Every event, in the order a turn meets them.
    pub const ALL: [Self; 4] = [
        Self::ConversationStart,
        Self::MessageReceived,
        Self::ResponseGenerated,
        Self::ResponseSent,
    ];

    /// The event's name, as `#[define_hook(event = "...")]` spells it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::ConversationStart => "conversation_start",
            Self::MessageReceived => "message_received",
            Self::ResponseGenerated => "response_generated",
            Self::ResponseSent => "response_sent",
        }
    }
}

impl std::fmt::Display for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// `conversation_start`: the first turn of a conversation, before the model sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConversationStart {
    turn: Turn,
    message: String,
}

impl ConversationStart {
    /// The start of the conversation of `turn`, opened by `message`.
    pub fn new(turn: Turn, message: impl Into<String>) -> Self {
        Self {
            turn,
            message: message.into(),
        }
    }

    /// The conversation and the reader.
    pub fn turn(&self) -> &Turn {
        &self.turn
    }

    /// The user's message that opened the conversation.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// `message_received`: a user's message, before the model sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MessageReceived {
    turn: Turn,
    message: String,
}

impl MessageReceived {
    /// `message` received in the conversation of `turn`.
    pub fn new(turn: Turn, message: impl Into<String>) -> Self {
        Self {
            turn,
            message: message.into(),
        }
    }

    /// The conversation and the reader.
    pub fn turn(&self) -> &Turn {
        &self.turn
    }

    /// The user's message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// `response_generated`: the model's reply, before it is sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResponseGenerated {
    turn: Turn,
    message: String,
    response: String,
    regeneration_count: u32,
    may_regenerate: bool,
}

impl ResponseGenerated {
    /// The `response` to `message`, generated after `regeneration_count` regenerations,
    /// in a turn that may be regenerated once more.
    pub fn new(
        turn: Turn,
        message: impl Into<String>,
        response: impl Into<String>,
        regeneration_count: u32,
    ) -> Self {
        Self {
            turn,
            message: message.into(),
            response: response.into(),
            regeneration_count,
            may_regenerate: true,
        }
    }

    /// The same reply, in a turn that may (`true`) or may not be regenerated again.
    pub fn with_regeneration_left(mut self, may_regenerate: bool) -> Self {
        self.may_regenerate = may_regenerate;
        self
    }

    /// The conversation and the reader.
    pub fn turn(&self) -> &Turn {
        &self.turn
    }

    /// The user's message the reply answers.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The model's reply.
    pub fn response(&self) -> &str {
        &self.response
    }

    /// How many times this turn was regenerated before this reply: 0 on the first pass.
    /// A hook that regenerates owns its stop condition; the engine also caps it.
    pub fn regeneration_count(&self) -> u32 {
        self.regeneration_count
    }

    /// Whether a regeneration asked for now would be made: `false` once the turn has
    /// been regenerated as often as the engine allows, or has made its last allowed
    /// model request. A regeneration asked for then is refused, and the reply (or a
    /// replacement another hook gave) is sent: a hook that must not let this reply out
    /// replaces it instead.
    pub fn may_regenerate(&self) -> bool {
        self.may_regenerate
    }
}

/// `response_sent`: the reply the user received (the model's, a replacement, or a halt
/// message).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResponseSent {
    turn: Turn,
    message: String,
    response: String,
}

impl ResponseSent {
    /// `response` sent in answer to `message`.
    pub fn new(turn: Turn, message: impl Into<String>, response: impl Into<String>) -> Self {
        Self {
            turn,
            message: message.into(),
            response: response.into(),
        }
    }

    /// The conversation and the reader.
    pub fn turn(&self) -> &Turn {
        &self.turn
    }

    /// The user's message the reply answers.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The reply as sent.
    pub fn response(&self) -> &str {
        &self.response
    }
}
