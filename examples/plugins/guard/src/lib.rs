//! Output hygiene for an agent: hooks only, no tools.
//!
//! `dirty_output_guard` replays a turn whose reply came out corrupted, twice at most, and
//! then replaces the reply with an apology. `blank_message` answers an empty message
//! without asking the model, and leaves no trace of the exchange.

use plugin_sdk::prelude::*;

plugin_sdk::plugin! {
    namespace = "guard",
    engine = ">=0.1, <2",
    display_name = { "en-US": "Output guard", "it-IT": "Guardia delle risposte" },
    description = { "en-US": "Keeps corrupted replies and blank messages away from users.", "it-IT": "Tiene lontane dagli utenti le risposte corrotte e i messaggi vuoti." },
}

/// How many times the guard replays a turn before it replaces the reply.
pub const MAX_REGENERATIONS: u32 = 2;

/// What the user receives when every replay came out corrupted too.
pub const APOLOGY: &str = "Sorry, something went wrong with that answer. Please try again.";

/// What the user receives for a blank message.
pub const BLANK_MESSAGE_REPLY: &str = "Your message was empty: please type your question.";

/// Replays the turn when the model's reply is corrupted (U+FFFD replacement characters,
/// control characters, or nothing at all); after two replays, or when the engine would
/// replay it no more, replaces it with an apology.
#[define_hook(
    event = "response_generated",
    mutates_response,
    position = 10,
    summary = { "en-US": "Replays a turn with corrupted output.", "it-IT": "Ripete un turno con output corrotto." },
)]
fn dirty_output_guard(event: &ResponseGenerated) -> ResponseOutcome {
    if !is_dirty(event.response()) {
        return ResponseOutcome::Observe;
    }
    // Replayed only while the engine will: a dirty reply never goes out.
    if event.regeneration_count() < MAX_REGENERATIONS && event.may_regenerate() {
        ResponseOutcome::Regenerate {
            reason: Some("corrupted output".into()),
        }
    } else {
        ResponseOutcome::ReplaceResponse {
            message: APOLOGY.into(),
        }
    }
}

/// Answers a blank message without the model, and keeps the exchange out of the history.
#[define_hook(
    event = "message_received",
    position = 0,
    summary = { "en-US": "Answers blank messages.", "it-IT": "Risponde ai messaggi vuoti." },
)]
fn blank_message(event: &MessageReceived) -> PreModelOutcome {
    if event.message().trim().is_empty() {
        PreModelOutcome::Halt {
            message: BLANK_MESSAGE_REPLY.into(),
            persist: false,
        }
    } else {
        PreModelOutcome::Observe
    }
}

/// Whether a reply came out corrupted: blank, or holding a U+FFFD replacement character
/// (a broken decode) or a control character other than a line break or a tab.
pub fn is_dirty(text: &str) -> bool {
    text.trim().is_empty()
        || text
            .chars()
            .any(|c| c == '\u{FFFD}' || (c.is_control() && !matches!(c, '\n' | '\r' | '\t')))
}

#[cfg(test)]
mod tests {
    use super::*;
    use plugin_sdk::hook::Turn;

    fn generated(response: &str, regeneration_count: u32) -> ResponseGenerated {
        ResponseGenerated::new(Turn::new("c-1"), "hello", response, regeneration_count)
    }

    #[test]
    fn a_clean_reply_is_observed() {
        let outcome = dirty_output_guard(&generated("Hello! How can I help?\n\t- here", 0));
        assert_eq!(outcome, ResponseOutcome::Observe);
    }

    #[test]
    fn a_dirty_reply_is_regenerated_twice_then_replaced() {
        let dirty = "Hel\u{FFFD}lo";
        for count in 0..MAX_REGENERATIONS {
            assert!(matches!(
                dirty_output_guard(&generated(dirty, count)),
                ResponseOutcome::Regenerate { .. }
            ));
        }
        assert_eq!(
            dirty_output_guard(&generated(dirty, MAX_REGENERATIONS)),
            ResponseOutcome::ReplaceResponse {
                message: APOLOGY.into()
            }
        );
    }

    #[test]
    fn a_dirty_reply_the_engine_would_not_replay_is_replaced_at_once() {
        let last = generated("Hel\u{FFFD}lo", 0).with_regeneration_left(false);
        assert_eq!(
            dirty_output_guard(&last),
            ResponseOutcome::ReplaceResponse {
                message: APOLOGY.into()
            }
        );
    }

    #[test]
    fn blank_and_control_characters_are_dirty() {
        assert!(is_dirty("  \n "));
        assert!(is_dirty("ok\u{0007}"));
        assert!(!is_dirty("Line one\r\nLine two"));
    }

    #[test]
    fn a_blank_message_halts_without_a_trace_and_others_pass() {
        let blank = MessageReceived::new(Turn::new("c-1"), "   ");
        assert_eq!(
            blank_message(&blank),
            PreModelOutcome::Halt {
                message: BLANK_MESSAGE_REPLY.into(),
                persist: false
            }
        );
        let question = MessageReceived::new(Turn::new("c-1"), "Where is my order?");
        assert_eq!(blank_message(&question), PreModelOutcome::Observe);
    }
}
