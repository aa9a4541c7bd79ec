//! How a hook is registered and run: the engine's side of `#[define_hook]`.

use std::time::Duration;

use super::event::HookEvent;
use super::{ConversationStart, Event, MessageReceived, ResponseGenerated, ResponseSent};
use crate::plugin::PluginManifest;
use crate::tool::{BoxFuture, SourceLocation};
use crate::LocalizedText;

/// A hook, as `#[define_hook]` registers it: a constant built at compile time.
pub struct HookDescriptor {
    /// The hook's name within its plugin (`dirty_output_guard`).
    pub name: &'static str,
    /// What the hook does: the function's doc comment, in English.
    pub description: &'static str,
    /// What people read; without it, the description.
    pub summary: Option<LocalizedText>,
    /// The hook's place among its event's hooks: lower runs first.
    pub position: u32,
    /// How long the hook may run; past it, the engine stops waiting and the hook has
    /// failed (see `fail_closed`).
    pub timeout: Duration,
    /// Whether the hook may replace the reply or regenerate the turn; only for
    /// `response_generated`. The engine then serves the turn non-streamed.
    pub mutates_response: bool,
    /// The reply the user receives when the hook fails (returns an error, panics, runs
    /// past its timeout, or, a plain `fn`, is still running for another turn): before the model the
    /// turn halts with it and leaves no trace; at `response_generated` (with
    /// `mutates_response`) it replaces the reply. `None`: a failure counts as observe.
    pub fail_closed: Option<LocalizedText>,
    /// The manifest of the plugin that defines the hook.
    pub plugin: fn() -> &'static PluginManifest,
    /// The event and the function that runs at it.
    pub handler: HookHandler,
    /// Where the hook is defined, for messages at start-up.
    pub location: SourceLocation,
}

impl HookDescriptor {
    /// The canonical id, `<namespace>:<name>`.
    pub fn id(&self) -> String {
        format!("{}:{}", (self.plugin)().namespace, self.name)
    }

    /// The event the hook runs at.
    pub fn event(&self) -> Event {
        self.handler.event()
    }

    /// The summary for a reader of `locale`; without one, the description.
    pub fn summary_for(&self, locale: &str) -> &'static str {
        match self.summary {
            Some(summary) => summary.resolve(locale),
            None => self.description,
        }
    }
}

/// A hook's event, with the function that runs at it: the payload and the outcome types
/// are the event's own, so a hook cannot be registered with another event's outcomes.
#[derive(Clone, Copy)]
pub enum HookHandler {
    /// Runs at `conversation_start`.
    ConversationStart(HookEntry<ConversationStart>),
    /// Runs at `message_received`.
    MessageReceived(HookEntry<MessageReceived>),
    /// Runs at `response_generated`.
    ResponseGenerated(HookEntry<ResponseGenerated>),
    /// Runs at `response_sent`.
    ResponseSent(HookEntry<ResponseSent>),
}

impl HookHandler {
    /// The event the handler runs at.
    pub fn event(&self) -> Event {
        match self {
            Self::ConversationStart(_) => Event::ConversationStart,
            Self::MessageReceived(_) => Event::MessageReceived,
            Self::ResponseGenerated(_) => Event::ResponseGenerated,
            Self::ResponseSent(_) => Event::ResponseSent,
        }
    }
}

/// What a hook function returns once erased: the event's outcome, or the hook's own
/// error as text for the log.
pub type HookResult<E> = Result<<E as HookEvent>::Outcome, String>;

/// The entry of a hook whose body cannot suspend (a plain `fn`, or an `async fn` without
/// `.await`).
pub type ReadyHookFn<E> = for<'a> fn(HookInput<'a, E>) -> HookResult<E>;

/// The entry of a hook whose body may suspend.
pub type AsyncHookFn<E> = for<'a> fn(HookInput<'a, E>) -> BoxFuture<'a, HookResult<E>>;

/// How a hook runs: at once, or as a future.
pub enum HookEntry<E: HookEvent> {
    /// A body that cannot suspend. The engine runs it on a blocking thread, so that even
    /// a hook that blocks is stopped waiting for at its timeout.
    Ready(ReadyHookFn<E>),
    /// A body that may suspend: a future polled under the hook's timeout.
    Async(AsyncHookFn<E>),
}

impl<E: HookEvent> Clone for HookEntry<E> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<E: HookEvent> Copy for HookEntry<E> {}

/// What the engine hands a hook: the event's payload (and, later, the turn's context).
pub struct HookInput<'a, E> {
    payload: &'a E,
}

impl<'a, E> HookInput<'a, E> {
    /// The input for one run of a hook at `payload`'s event.
    pub fn new(payload: &'a E) -> Self {
        Self { payload }
    }

    /// The event's payload.
    pub fn payload(&self) -> &'a E {
        self.payload
    }
}

impl<E> Clone for HookInput<'_, E> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<E> Copy for HookInput<'_, E> {}

/// A parameter of a hook function, taken from the engine's [`HookInput`].
///
/// A hook takes its event's payload by reference (`event: &MessageReceived`), or nothing.
#[diagnostic::on_unimplemented(
    message = "this hook receives `&{E}`, not `{Self}`",
    label = "take `&{E}` here, or no parameter",
    note = "a hook's parameter is its event's payload, by reference"
)]
pub trait HookParam<'a, E: HookEvent>: Sized {
    /// Takes the parameter from `input`.
    fn extract(input: HookInput<'a, E>) -> Self;
}

impl<'a, E: HookEvent> HookParam<'a, E> for &'a E {
    fn extract(input: HookInput<'a, E>) -> Self {
        input.payload
    }
}

inventory::collect!(HookDescriptor);

/// Every hook linked into this binary, in link order.
pub fn linked_hooks() -> impl Iterator<Item = &'static HookDescriptor> {
    inventory::iter::<HookDescriptor>.into_iter()
}
