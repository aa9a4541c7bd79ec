//! Hooks: deterministic lifecycle code that runs at a turn's events, never offered to the
//! model and never in a tool catalog.
//!
//! `#[define_hook(event = "...")]` registers a plain or `async` function. Its parameter, if
//! any, is the event's payload by reference; its return type is what the event allows,
//! checked at compile time:
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
//!     } else if event.regeneration_count() < 2 {
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
