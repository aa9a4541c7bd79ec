//! Who a turn is for, and which conversation: from the turn, never from the model.

/// The end user the turn is for, as the engine knows them (an id). A tool that takes it
/// gets it from the turn: the model can neither see nor choose it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Subscriber(String);

/// The conversation the call belongs to (an id).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Conversation(String);

macro_rules! turn_id {
    ($name:ident, $field:ident) => {
        impl $name {
            /// The id the engine gave; a constructor for unit tests that call a tool
            /// directly (an engine fills it from the turn).
            pub fn new(id: impl Into<String>) -> Self {
                Self(id.into())
            }

            /// The id.
            pub fn id(&self) -> &str {
                &self.0
            }

            pub(crate) fn from_turn(turn: &TurnIdentity) -> Self {
                Self(turn.$field.clone())
            }
        }
    };
}

turn_id!(Subscriber, subscriber);
turn_id!(Conversation, conversation);

/// The turn a call belongs to, as the engine sets it on the context.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TurnIdentity {
    /// The end user's id.
    pub subscriber: String,
    /// The conversation's id.
    pub conversation: String,
}
