//! Hooks on the wire: how a session declares them, and an event's payload and a hook's
//! outcome as frames carry them, converted to and from the SDK's types on both sides.

use plugin_sdk::engine::HookEvent;
use plugin_sdk::hook::{
    ConversationStart, Event, MessageReceived, PreModelOutcome, ResponseGenerated, ResponseOutcome,
    ResponseSent, Turn,
};
use serde::{Deserialize, Serialize};

use super::{NeedsDecl, SecretDecl};

/// A hook the author's process serves.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookDecl {
    /// Its plugin's namespace, in the author's process.
    pub namespace: String,
    /// Its name: bare, as `#[define_hook]` names the function.
    pub name: String,
    /// The event it runs at (`message_received`, …).
    pub event: String,
    /// Where it runs.
    pub binding: Binding,
    /// The longest it runs, in milliseconds, when bound (an override keeps the one the
    /// agent gives the hook it replaces).
    pub timeout_ms: u64,
    /// Whether it may replace or regenerate the reply (`response_generated` only).
    pub mutates_response: bool,
    /// What of the context its parameters read.
    pub needs: NeedsDecl,
    /// The secrets it declares.
    pub secrets: Vec<SecretDecl>,
}

impl HookDecl {
    /// The id its process knows it by, which a call of it names.
    pub fn id(&self) -> String {
        format!("{}:{}", self.namespace, self.name)
    }
}

/// Where a session's hook runs (seed 003's `overrides` and `bindTo`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Binding {
    /// In place of the hook of this id that the agent runs: the same event, position and
    /// timeout, this implementation.
    Overrides {
        /// The replaced hook's id.
        hook: String,
    },
    /// At its event, at this position, for the session only, under its bare name.
    Bound {
        /// Its place among the event's hooks: lower runs first.
        position: u32,
    },
}

/// The event named `name` on the wire.
pub fn event_named(name: &str) -> Option<Event> {
    Event::ALL.into_iter().find(|event| event.as_str() == name)
}

/// An event's payload: what every event carries, and what some do.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventPayload {
    /// The conversation's id.
    pub conversation: String,
    /// The reader's locale.
    pub locale: Option<String>,
    /// The user's message.
    pub message: String,
    /// The reply (`response_generated`, `response_sent`).
    pub response: Option<String>,
    /// The regenerations so far (`response_generated`).
    pub regeneration_count: Option<u32>,
    /// Whether the reply may be regenerated again (`response_generated`).
    pub may_regenerate: Option<bool>,
}

impl EventPayload {
    fn turn(&self) -> Turn {
        let turn = Turn::new(self.conversation.clone());
        match &self.locale {
            Some(locale) => turn.with_locale(locale.clone()),
            None => turn,
        }
    }

    fn of(turn: &Turn, message: &str) -> Self {
        Self {
            conversation: turn.conversation().to_owned(),
            locale: turn.locale().map(str::to_owned),
            message: message.to_owned(),
            response: None,
            regeneration_count: None,
            may_regenerate: None,
        }
    }
}

/// A hook's outcome on the wire: any event's; each event takes the ones it allows.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum HookOutcome {
    /// Nothing changes.
    Observe,
    /// The turn stops with `message` (before the model).
    Halt {
        /// The reply.
        message: String,
        /// Whether the exchange is kept in the history.
        persist: bool,
    },
    /// Context for the model (before the model).
    InjectContext {
        /// The text.
        text: String,
    },
    /// The reply is replaced (`response_generated`).
    ReplaceResponse {
        /// The new reply.
        message: String,
    },
    /// The reply is generated again (`response_generated`).
    Regenerate {
        /// Why, for the model.
        reason: Option<String>,
    },
}

/// An event as the wire carries it, both ways, with its hooks' outcomes.
pub trait WireEvent: HookEvent + Sized {
    /// Its payload on the wire.
    fn to_payload(&self) -> EventPayload;
    /// The event of `payload`.
    fn from_payload(payload: EventPayload) -> Self;
    /// An outcome of its hooks, on the wire.
    fn outcome_to_wire(outcome: Self::Outcome) -> HookOutcome;
    /// An outcome of the wire, or why the event does not allow it.
    fn outcome_from_wire(outcome: HookOutcome) -> Result<Self::Outcome, String>;
}

fn pre_model_to_wire(outcome: PreModelOutcome) -> HookOutcome {
    match outcome {
        PreModelOutcome::Observe => HookOutcome::Observe,
        PreModelOutcome::Halt { message, persist } => HookOutcome::Halt { message, persist },
        PreModelOutcome::InjectContext(text) => HookOutcome::InjectContext { text },
    }
}

fn pre_model_from_wire(outcome: HookOutcome) -> Result<PreModelOutcome, String> {
    match outcome {
        HookOutcome::Observe => Ok(PreModelOutcome::Observe),
        HookOutcome::Halt { message, persist } => Ok(PreModelOutcome::Halt { message, persist }),
        HookOutcome::InjectContext { text } => Ok(PreModelOutcome::InjectContext(text)),
        other => Err(format!("{other:?} is not an outcome before the model")),
    }
}

macro_rules! pre_model_event {
    ($event:ty) => {
        impl WireEvent for $event {
            fn to_payload(&self) -> EventPayload {
                EventPayload::of(self.turn(), self.message())
            }

            fn from_payload(payload: EventPayload) -> Self {
                <$event>::new(payload.turn(), payload.message)
            }

            fn outcome_to_wire(outcome: PreModelOutcome) -> HookOutcome {
                pre_model_to_wire(outcome)
            }

            fn outcome_from_wire(outcome: HookOutcome) -> Result<PreModelOutcome, String> {
                pre_model_from_wire(outcome)
            }
        }
    };
}

pre_model_event!(ConversationStart);
pre_model_event!(MessageReceived);

impl WireEvent for ResponseGenerated {
    fn to_payload(&self) -> EventPayload {
        EventPayload {
            response: Some(self.response().to_owned()),
            regeneration_count: Some(self.regeneration_count()),
            may_regenerate: Some(self.may_regenerate()),
            ..EventPayload::of(self.turn(), self.message())
        }
    }

    fn from_payload(payload: EventPayload) -> Self {
        let turn = payload.turn();
        ResponseGenerated::new(
            turn,
            payload.message,
            payload.response.unwrap_or_default(),
            payload.regeneration_count.unwrap_or_default(),
        )
        .with_regeneration_left(payload.may_regenerate.unwrap_or(false))
    }

    fn outcome_to_wire(outcome: ResponseOutcome) -> HookOutcome {
        match outcome {
            ResponseOutcome::Observe => HookOutcome::Observe,
            ResponseOutcome::ReplaceResponse { message } => {
                HookOutcome::ReplaceResponse { message }
            }
            ResponseOutcome::Regenerate { reason } => HookOutcome::Regenerate { reason },
        }
    }

    fn outcome_from_wire(outcome: HookOutcome) -> Result<ResponseOutcome, String> {
        match outcome {
            HookOutcome::Observe => Ok(ResponseOutcome::Observe),
            HookOutcome::ReplaceResponse { message } => {
                Ok(ResponseOutcome::ReplaceResponse { message })
            }
            HookOutcome::Regenerate { reason } => Ok(ResponseOutcome::Regenerate { reason }),
            other => Err(format!("{other:?} is not an outcome after a reply")),
        }
    }
}

impl WireEvent for ResponseSent {
    fn to_payload(&self) -> EventPayload {
        EventPayload {
            response: Some(self.response().to_owned()),
            ..EventPayload::of(self.turn(), self.message())
        }
    }

    fn from_payload(payload: EventPayload) -> Self {
        let turn = payload.turn();
        ResponseSent::new(turn, payload.message, payload.response.unwrap_or_default())
    }

    fn outcome_to_wire((): ()) -> HookOutcome {
        HookOutcome::Observe
    }

    fn outcome_from_wire(outcome: HookOutcome) -> Result<(), String> {
        match outcome {
            HookOutcome::Observe => Ok(()),
            other => Err(format!(
                "{other:?} is not an outcome once the reply is sent"
            )),
        }
    }
}
