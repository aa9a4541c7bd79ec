//! The events a hook can name, and what each one admits.

/// One of the four events, as the macro knows it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Event {
    ConversationStart,
    MessageReceived,
    ResponseGenerated,
    ResponseSent,
}

impl Event {
    pub const ALL: [Self; 4] = [
        Self::ConversationStart,
        Self::MessageReceived,
        Self::ResponseGenerated,
        Self::ResponseSent,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::ConversationStart => "conversation_start",
            Self::MessageReceived => "message_received",
            Self::ResponseGenerated => "response_generated",
            Self::ResponseSent => "response_sent",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|event| event.name() == name)
    }

    /// The payload type, which is also the `HookHandler` variant.
    pub fn payload(self) -> &'static str {
        match self {
            Self::ConversationStart => "ConversationStart",
            Self::MessageReceived => "MessageReceived",
            Self::ResponseGenerated => "ResponseGenerated",
            Self::ResponseSent => "ResponseSent",
        }
    }

    /// The trait the return type must implement, whose message says what the event allows.
    pub fn return_trait(self, mutates_response: bool) -> &'static str {
        match (self, mutates_response) {
            (Self::ConversationStart, _) => "ConversationStartReturn",
            (Self::MessageReceived, _) => "MessageReceivedReturn",
            (Self::ResponseGenerated, true) => "MutatingResponseGeneratedReturn",
            (Self::ResponseGenerated, false) => "ResponseGeneratedReturn",
            (Self::ResponseSent, _) => "ResponseSentReturn",
        }
    }

    /// What a hook at this event may do, for messages.
    pub fn allows(self) -> &'static str {
        match self {
            Self::ConversationStart | Self::MessageReceived => {
                "it may observe, halt the turn or inject context"
            }
            Self::ResponseGenerated => {
                "it may observe, or with `mutates_response` replace the reply or regenerate the turn"
            }
            Self::ResponseSent => "it only observes",
        }
    }
}

/// The event whose name is closest to `name`, for "did you mean" (a typo of at most
/// three edits).
pub fn closest(name: &str) -> Option<Event> {
    Event::ALL
        .into_iter()
        .map(|event| (edit_distance(name, event.name()), event))
        .filter(|(distance, _)| *distance <= 3)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, event)| event)
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current.push(substitution.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_finds_its_event_and_nonsense_finds_none() {
        assert!(closest("message_recieved") == Some(Event::MessageReceived));
        assert!(closest("response_send") == Some(Event::ResponseSent));
        assert!(closest("on_tool_call").is_none());
    }
}
