//! How a hook is registered and run: the engine's side of `#[define_hook]`.

use std::time::Duration;

use super::{
    ConversationStart, Event, MessageReceived, PreModelOutcome, ResponseGenerated, ResponseOutcome,
    ResponseSent,
};
use crate::abort::Abort;
use crate::audit::Audit;
use crate::context::{
    secret_bundle_from, AgentName, History, Instance, SecretBundle, SecretSpec, TurnChannel,
};
use crate::future::BoxFuture;
use crate::model::Model;
use crate::param::{CallInput, Needs, ToolParam};
use crate::plugin::PluginManifest;
use crate::state::State;
use crate::tool::SourceLocation;
use crate::turn::{Conversation, Subscriber};
use crate::{LocalizedText, ToolContext};

/// An event's payload type, which names the event, what its hooks return, and where a
/// hook's entry for it sits in a [`HookHandler`]. Implemented by the four payloads only.
pub trait HookEvent: Sized + Send + Sync + 'static + sealed::Sealed {
    /// The event.
    const EVENT: Event;
    /// What a hook at this event tells the engine.
    type Outcome: Send + 'static;
    /// The entry of `handler`, when the hook runs at this event.
    fn entry(handler: &HookHandler) -> Option<HookEntry<Self>>;
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! events {
    ($($payload:ident, $outcome:ty;)*) => {$(
        impl sealed::Sealed for $payload {}

        impl HookEvent for $payload {
            const EVENT: Event = Event::$payload;
            type Outcome = $outcome;

            fn entry(handler: &HookHandler) -> Option<HookEntry<Self>> {
                match handler {
                    HookHandler::$payload(entry) => Some(*entry),
                    _ => None,
                }
            }
        }
    )*};
}

events! {
    ConversationStart, PreModelOutcome;
    MessageReceived, PreModelOutcome;
    ResponseGenerated, ResponseOutcome;
    ResponseSent, ();
}

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
    /// What its parameters read of the turn besides the payload: the engine builds only
    /// these.
    pub needs: Needs,
    /// The secrets its parameters declare, by parameter.
    pub secrets: &'static [&'static [SecretSpec]],
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

    /// Every secret the hook declares.
    pub fn secret_specs(&self) -> impl Iterator<Item = &'static SecretSpec> {
        self.secrets.iter().flat_map(|specs| specs.iter())
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

/// What the engine hands a hook: the event's payload, and the turn's context built for
/// the hook (what its parameters declare, and nothing else).
pub struct HookInput<'a, E> {
    payload: &'a E,
    context: &'a ToolContext,
}

impl<'a, E> HookInput<'a, E> {
    /// The input for one run of a hook at `payload`'s event, outside any turn.
    pub fn new(payload: &'a E) -> Self {
        Self {
            payload,
            context: ToolContext::empty(),
        }
    }

    /// The same input, in the turn `context` describes.
    pub fn with_context(self, context: &'a ToolContext) -> Self {
        Self { context, ..self }
    }

    /// The event's payload.
    pub fn payload(&self) -> &'a E {
        self.payload
    }

    /// The turn's context for this run.
    pub fn context(&self) -> &'a ToolContext {
        self.context
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
/// A hook takes its event's payload by reference (`event: &MessageReceived`), and the
/// extractors its event can give: the turn's [`Subscriber`] and [`Conversation`], the
/// conversation's `&State` (at every event but `response_sent`, when the turn is already
/// stored), a `#[derive(Secrets)]` struct, `Option<Model>`, `&Audit` and `&Abort`.
#[diagnostic::on_unimplemented(
    message = "a `{E}` hook cannot take `{Self}`",
    label = "not a parameter of a `{E}` hook",
    note = "a hook takes its event's payload by reference (`&{E}`), and extractors: `Subscriber`, `Conversation`, `Instance`, `AgentName`, `TurnChannel` or `Option<TurnChannel>`, `History`, `&State` (not at `response_sent`: the turn is stored by then), a `#[derive(Secrets)]` struct, `Option<Model>`, `&Audit`, `&Abort`"
)]
pub trait HookParam<E: HookEvent>: Sized {
    /// What of the turn it reads.
    const NEEDS: Needs = Needs::NOTHING;
    /// The secrets it declares.
    const SECRETS: &'static [SecretSpec] = &[];
    /// Whether it is the event's payload, which a hook takes once.
    const IS_PAYLOAD: bool = false;
    /// What the hook function receives for it in a run that lives `'a`.
    type Extracted<'a>;

    /// Takes the parameter from `input`; an error fails the hook (logged, and read as its
    /// failure: observe, or its `fail_closed` reply).
    fn extract<'a>(input: HookInput<'a, E>) -> Result<Self::Extracted<'a>, String>;
}

// One impl per payload rather than one for every `&E`: the blanket impl for secret
// bundles below could otherwise overlap it.
macro_rules! payloads {
    ($($event:ident),*) => {$(
        impl HookParam<$event> for &$event {
            const IS_PAYLOAD: bool = true;
            type Extracted<'a> = &'a $event;

            fn extract<'a>(input: HookInput<'a, $event>) -> Result<&'a $event, String> {
                Ok(input.payload)
            }
        }
    )*};
}

payloads!(
    ConversationStart,
    MessageReceived,
    ResponseGenerated,
    ResponseSent
);

/// The events whose hooks run before the turn is stored, so that the state they write
/// is stored with it: every event but `response_sent`.
#[diagnostic::on_unimplemented(
    message = "a `{Self}` hook cannot take `&State`: it runs once the turn is stored, so what it wrote would be lost",
    label = "the state is for hooks before the turn is stored",
    note = "read or write the state in a `response_generated` hook, which runs before the turn is stored"
)]
pub trait WritesState: HookEvent {}

impl WritesState for ConversationStart {}
impl WritesState for MessageReceived {}
impl WritesState for ResponseGenerated {}

impl<E: WritesState> HookParam<E> for &State {
    const NEEDS: Needs = Needs {
        conversation: true,
        ..Needs::NOTHING
    };
    type Extracted<'a> = &'a State;

    fn extract<'a>(input: HookInput<'a, E>) -> Result<&'a State, String> {
        input
            .context
            .state()
            .ok_or_else(|| "the turn has no conversation, so no state".to_owned())
    }
}

macro_rules! turn_identity {
    ($($name:ident),*) => {$(
        impl<E: HookEvent> HookParam<E> for $name {
            const NEEDS: Needs = Needs {
                conversation: true,
                ..Needs::NOTHING
            };
            type Extracted<'a> = $name;

            fn extract<'a>(input: HookInput<'a, E>) -> Result<$name, String> {
                input
                    .context
                    .turn()
                    .map($name::from_turn)
                    .ok_or_else(|| "the turn has no conversation".to_owned())
            }
        }
    )*};
}

turn_identity!(Subscriber, Conversation);

// Extractors a hook takes as a tool does, read from its context alike.
macro_rules! as_a_tool_does {
    ($($name:ty),*) => {$(
        impl<E: HookEvent> HookParam<E> for $name {
            const NEEDS: Needs = <$name as ToolParam>::NEEDS;
            type Extracted<'a> = $name;

            fn extract<'a>(input: HookInput<'a, E>) -> Result<$name, String> {
                <$name as ToolParam>::extract(&CallInput::of_context(input.context))
                    .map_err(|error| error.message().to_owned())
            }
        }
    )*};
}

as_a_tool_does!(
    Instance,
    AgentName,
    TurnChannel,
    Option<TurnChannel>,
    History
);

impl<E: HookEvent> HookParam<E> for &Audit {
    const NEEDS: Needs = Needs {
        audit: true,
        ..Needs::NOTHING
    };
    type Extracted<'a> = &'a Audit;

    fn extract<'a>(input: HookInput<'a, E>) -> Result<&'a Audit, String> {
        Ok(input.context.audit())
    }
}

impl<E: HookEvent> HookParam<E> for &Abort {
    const NEEDS: Needs = Needs {
        abort: true,
        ..Needs::NOTHING
    };
    type Extracted<'a> = &'a Abort;

    fn extract<'a>(input: HookInput<'a, E>) -> Result<&'a Abort, String> {
        Ok(input.context.abort())
    }
}

impl<E: HookEvent> HookParam<E> for Option<Model> {
    const NEEDS: Needs = Needs {
        model: true,
        ..Needs::NOTHING
    };
    type Extracted<'a> = Option<Model>;

    fn extract<'a>(input: HookInput<'a, E>) -> Result<Option<Model>, String> {
        Ok(input.context.model())
    }
}

/// Builds a `#[derive(Secrets)]` struct from the hook's secrets, for the `HookParam`
/// impl the derive writes.
pub(crate) fn hook_secret_bundle<E, B: SecretBundle>(input: HookInput<'_, E>) -> Result<B, String> {
    secret_bundle_from(input.context).map_err(|error| error.message().to_owned())
}

inventory::collect!(HookDescriptor);

/// Every hook linked into this binary, in link order.
pub fn linked_hooks() -> impl Iterator<Item = &'static HookDescriptor> {
    inventory::iter::<HookDescriptor>.into_iter()
}
