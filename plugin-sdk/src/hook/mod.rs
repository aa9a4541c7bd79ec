//! Hooks: deterministic lifecycle code that runs at a turn's events, never offered to the
//! model and never in a tool catalog.
//!
//! `#[define_hook(event = "...")]` registers a plain or `async` function. Its return type
//! is what the event allows, checked at compile time:
//!
//! | event | payload | may return |
//! | --- | --- | --- |
//! | `conversation_start` | [`ConversationStart`] | `()`, [`PreModelOutcome`] |
//! | `message_received` | [`MessageReceived`] | `()`, [`PreModelOutcome`] |
//! | `response_generated` | [`ResponseGenerated`] | `()`; with `mutates_response`, [`ResponseOutcome`] |
//! | `response_sent` | [`ResponseSent`] | `()` |
//!
//! Any of them may come inside a `Result<_, E: Display>`: an error is logged and counts as
//! observe, as do a panic and a timeout, unless the hook declares `fail_closed`: then its
//! failure halts the turn (or replaces the reply) with that text. Attributes: `event`
//! (required), `name`, `summary` (LocalizedText), `position` (default 100; lower runs
//! first), `timeout_ms` (default 2000, at most 60000), `mutates_response`, `fail_closed`
//! (LocalizedText), `crate`.
//!
//! # Parameters
//!
//! A hook takes, in any order, the event's payload by reference and the turn's context as
//! extractors, each checked against its event at compile time; the engine builds only
//! what the parameters name:
//!
//! | parameter | what it is | events |
//! | --- | --- | --- |
//! | `&MessageReceived` (the event's payload) | what happened | its own |
//! | `Subscriber`, `Conversation` | the turn's identity | all |
//! | `&State` | the conversation's state, over the turn's snapshot and what earlier hooks of the pass wrote; writes are kept when the pass ends, and stored with the turn (dropped when the hook fails, by a halt that leaves no trace, and with a reply its pass regenerates) | all but `response_sent` ([`WritesState`]) |
//! | a `#[derive(Secrets)]` struct | the secrets it declares, and no other | all |
//! | `Option<Model>` | model access by tier, metered to the turn; `None` without the agent's grant | all |
//! | `&Audit` | the audit logger, which redacts secrets | all |
//! | `&Abort` | the run's abort signal: its deadline is the hook's timeout | all |
//!
//! A plain `fn` runs on a blocking thread and is left behind at its timeout: check
//! [`Abort::is_aborted`](crate::abort::Abort::is_aborted) in long work to stop there.
//!
//! ```
//! use plugin_sdk::prelude::*;
//!
//! plugin_sdk::plugin! { namespace = "guard", engine = ">=0.1" }
//!
//! /// Replays a turn whose reply came out corrupted, twice at most, then apologizes.
//! #[define_hook(
//!     event = "response_generated",
//!     mutates_response,
//!     summary = { "en-US": "Replays a turn with corrupted output.", "it-IT": "Ripete un turno con output corrotto." },
//! )]
//! fn dirty_output_guard(event: &ResponseGenerated) -> ResponseOutcome {
//!     if !event.response().contains('\u{FFFD}') {
//!         ResponseOutcome::Observe
//!     } else if event.regeneration_count() < 2 && event.may_regenerate() {
//!         ResponseOutcome::Regenerate { reason: Some("corrupted output".into()) }
//!     } else {
//!         ResponseOutcome::ReplaceResponse { message: "Sorry, please try again.".into() }
//!     }
//! }
//! # fn main() {}
//! ```

pub(crate) mod event;
pub(crate) mod outcome;

pub(crate) mod registration;

pub use event::{ConversationStart, Event, MessageReceived, ResponseGenerated, ResponseSent, Turn};
pub use outcome::{PreModelOutcome, ResponseOutcome};
pub use registration::WritesState;
