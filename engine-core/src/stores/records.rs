//! What the conversation store keeps and gives back besides messages: turns, staged
//! actions, and its error, shared by every backend.

/// Why the conversation store failed.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ConversationError(pub String);

/// A turn as the store recorded it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct TurnRecord {
    /// Why it ended, as the [`Stop`](crate::Stop) of its `done` event (JSON), or
    /// `{"reason":"interrupted"}` for a turn whose replica stopped before its end.
    pub stop: String,
    /// Tokens its model requests used.
    pub usage: crate::provider::Usage,
    /// What its model requests cost, in US dollars.
    pub cost_usd: f64,
    /// How many model requests it made.
    pub model_requests: u32,
    /// The replica that ran it (a shared database only).
    pub replica: Option<String>,
}

/// Where a staged action stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionState {
    /// Recorded, and running (or the engine stopped while it ran, until its next start).
    Performing,
    /// It ran to the end.
    Performed,
    /// It ran and failed; it is not retried.
    Failed,
    /// Whether it took effect is not known: it timed out, or the engine stopped while it
    /// ran. It is not run again.
    Unknown,
}

impl ActionState {
    /// Its name in a store.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Performing => "performing",
            Self::Performed => "performed",
            Self::Failed => "failed",
            Self::Unknown => "unknown",
        }
    }

    /// The state a store named (`unknown` for a name it does not know).
    pub fn parse(text: &str) -> Self {
        match text {
            "performing" => Self::Performing,
            "performed" => Self::Performed,
            "failed" => Self::Failed,
            _ => Self::Unknown,
        }
    }
}

/// A staged action, as the store keeps it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ActionRecord {
    /// Its number in the store.
    pub id: i64,
    /// The model's call that staged it (an id the model, or the engine for a call
    /// without one, gave; it may repeat across turns).
    pub call_id: String,
    /// Where that call's answer is in the conversation's history: what settles the
    /// answer, since a position holds one message. `None` in a record kept before stores
    /// had positions.
    pub position: Option<u64>,
    /// The action's id (`acme:log_contact`).
    pub action: String,
    /// Its arguments, as the model sent them (JSON text).
    pub arguments: String,
    /// The subscriber it was performed for.
    pub subscriber: String,
    /// Where it stands.
    pub state: ActionState,
    /// Its output (performed) or why not (failed, unknown).
    pub detail: Option<String>,
}

/// What a process that stopped left running: marked when another takes over.
pub const INTERRUPTED: &str = "the engine stopped while it ran; it is not run again";
