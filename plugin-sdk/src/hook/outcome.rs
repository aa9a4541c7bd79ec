//! What a hook tells the engine, typed per event.
//!
//! A hook returns `()` to observe, or its event's outcome type, optionally inside a
//! `Result` whose error is logged (and then counts as observe, or halts the turn when the
//! hook declares `fail_closed`). Which return types an
//! event admits is a trait per event; `#[define_hook]` requires the one for the hook's
//! event at its return type, so a wrong combination fails to compile with a message that
//! names the event and what it allows.

use std::fmt::Display;

/// What a hook before the model (`conversation_start`, `message_received`) decides.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum PreModelOutcome {
    /// Let the turn go on unchanged.
    #[default]
    Observe,
    /// Skip the model and reply with `message`. Later hooks of the turn do not run.
    Halt {
        /// The reply the user receives.
        message: String,
        /// `false` makes the exchange ephemeral: no message rows, no state flush, as
        /// for a command whose exchange must stay out of the model's history.
        persist: bool,
    },
    /// Add one system message to the model's input, for this turn only.
    InjectContext(String),
}

/// What a `mutates_response` hook at `response_generated` decides.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ResponseOutcome {
    /// Keep the reply.
    #[default]
    Observe,
    /// Send `message` instead of the model's reply.
    ReplaceResponse {
        /// The reply the user receives.
        message: String,
    },
    /// Discard the reply and replay the whole turn (system prompt and tools). The hook
    /// owns the stop condition, through the payload's `regeneration_count`; the engine
    /// also caps regenerations.
    Regenerate {
        /// Why, for the log.
        reason: Option<String>,
    },
}

/// Defines the trait a hook's return type must implement for one event, with the message
/// an author sees when it does not, and implements it for `()`, `$outcome` and a
/// `Result` of either.
macro_rules! return_trait {
    (
        $(#[$doc:meta])*
        $name:ident -> $event_outcome:ty, message = $message:literal, note = $note:literal,
        admits [$($admitted:ty),*]
    ) => {
        $(#[$doc])*
        #[diagnostic::on_unimplemented(message = $message, label = "not what this event allows", note = $note)]
        pub trait $name {
            /// The outcome, or the hook's error as text for the log.
            fn into_outcome(self) -> Result<$event_outcome, String>;
        }

        #[diagnostic::do_not_recommend]
        impl $name for () {
            fn into_outcome(self) -> Result<$event_outcome, String> {
                Ok(Default::default())
            }
        }

        $(#[diagnostic::do_not_recommend]
        impl $name for $admitted {
            fn into_outcome(self) -> Result<$event_outcome, String> {
                Ok(self)
            }
        })*

        #[diagnostic::do_not_recommend]
        impl<T: $name, E: Display> $name for Result<T, E> {
            fn into_outcome(self) -> Result<$event_outcome, String> {
                self.map_err(|error| error.to_string())?.into_outcome()
            }
        }
    };
}

return_trait! {
    /// What a `conversation_start` hook may return.
    ConversationStartReturn -> PreModelOutcome,
    message = "a `conversation_start` hook cannot return `{Self}`",
    note = "a `conversation_start` hook returns `()` to observe, or a `PreModelOutcome`: `Observe`, `Halt {{ message, persist }}` or `InjectContext(text)`; either may be inside a `Result<_, E>` whose `E` implements `Display`",
    admits [PreModelOutcome]
}

return_trait! {
    /// What a `message_received` hook may return.
    MessageReceivedReturn -> PreModelOutcome,
    message = "a `message_received` hook cannot return `{Self}`",
    note = "a `message_received` hook returns `()` to observe, or a `PreModelOutcome`: `Observe`, `Halt {{ message, persist }}` or `InjectContext(text)`; either may be inside a `Result<_, E>` whose `E` implements `Display`",
    admits [PreModelOutcome]
}

return_trait! {
    /// What a `response_generated` hook declared `mutates_response` may return.
    MutatingResponseGeneratedReturn -> ResponseOutcome,
    message = "a `response_generated` hook cannot return `{Self}`",
    note = "a `response_generated` hook with `mutates_response` returns `()` to observe, or a `ResponseOutcome`: `Observe`, `ReplaceResponse {{ message }}` or `Regenerate {{ reason }}`; either may be inside a `Result<_, E>` whose `E` implements `Display`",
    admits [ResponseOutcome]
}

return_trait! {
    /// What a `response_generated` hook without `mutates_response` may return.
    ResponseGeneratedReturn -> ResponseOutcome,
    message = "a `response_generated` hook without `mutates_response` cannot return `{Self}`: it only observes",
    note = "return `()` to observe (or `Result<(), E>` whose `E` implements `Display`); to replace the reply or regenerate the turn, declare `#[define_hook(event = \"response_generated\", mutates_response)]` and return a `ResponseOutcome`",
    admits []
}

return_trait! {
    /// What a `response_sent` hook may return.
    ResponseSentReturn -> (),
    message = "a `response_sent` hook cannot return `{Self}`: the reply is already sent, so it only observes",
    note = "a `response_sent` hook returns `()` (or `Result<(), E>` whose `E` implements `Display`); to change the reply, use a `response_generated` hook with `mutates_response`",
    admits []
}
