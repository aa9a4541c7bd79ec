//! The turn layer: one turn of an agent (whose it is, its tools' calls and their
//! contexts, the hook pipeline around its model calls, and the agent loop of
//! [`Engine::converse`](crate::Engine::converse)), run over a [`Runtime`]: the registry
//! and the stores a turn touches, and nothing of the engine's configuration, reload or
//! extensions. [`Engine`](crate::Engine) holds one and delegates to it.

pub mod attachments;
mod call;
mod context;
mod converse;
mod dev_call;
pub(crate) mod history;
mod pipeline;
mod runtime;

use std::sync::Arc;

use plugin_sdk::hook;
use plugin_sdk::turn::TurnChannel;

pub use call::{Call, CallFuture};
pub use converse::{TurnControl, TurnEvent};
pub use pipeline::{ModelInput, TurnEnd, TurnOutcome};
pub(crate) use runtime::{EngineId, Runtime};

use crate::agent::Agent;
use crate::model::TurnSpend;

/// One turn of an agent, for whom and in which conversation: its calls share the turn's
/// model spend and see the conversation's state and artifacts.
///
/// [`Engine::turn`](crate::Engine::turn) gives a turn outside any conversation (an MCP session, the command
/// line), which is offered only the tools that need none;
/// [`in_conversation`](Self::in_conversation) puts it in one.
#[derive(Debug)]
pub struct Turn {
    /// The engine that made it: its agent equips that engine's tools.
    engine: EngineId,
    /// The agent, as configured when the turn was made (a reload does not change it).
    agent: Arc<Agent>,
    conversation: Option<InConversation>,
    /// The channel it came through, when its caller says.
    channel: Option<TurnChannel>,
    locale: Option<String>,
    /// The files sent with its message, checked ([`Engine::attach`](crate::Engine::attach)).
    attachments: Vec<attachments::Attachment>,
    spend: Arc<TurnSpend>,
}

/// Who a turn is for, and which conversation.
#[derive(Clone, Debug)]
struct InConversation {
    subscriber: String,
    conversation: String,
}

impl Turn {
    /// The same turn, for `subscriber` in `conversation` (the engine's ids for them).
    pub fn in_conversation(
        mut self,
        subscriber: impl Into<String>,
        conversation: impl Into<String>,
    ) -> Self {
        self.conversation = Some(InConversation {
            subscriber: subscriber.into(),
            conversation: conversation.into(),
        });
        self
    }

    /// The same turn, come through the channel `name` (a linked channel's, `api` for the
    /// turn route, `cli` for the command line), in its conversation `conversation` (the
    /// id as the channel gave it): what a tool's `TurnChannel` reads.
    pub fn via(mut self, name: &str, conversation: &str) -> Self {
        self.channel = Some(TurnChannel::new(name, conversation));
        self
    }

    /// The same turn, for a reader of `locale` (a BCP 47 tag).
    pub fn with_locale(mut self, locale: impl Into<String>) -> Self {
        self.locale = Some(locale.into());
        self
    }

    /// The same turn, its message bringing `attachments`, which [`Engine::attach`]
    /// checked.
    ///
    /// [`Engine::attach`]: crate::Engine::attach
    pub(crate) fn with_attachments(mut self, attachments: Vec<attachments::Attachment>) -> Self {
        self.attachments = attachments;
        self
    }

    /// The agent's name.
    pub fn agent(&self) -> &str {
        self.agent.name()
    }

    /// The agent's configuration, as it was when the turn was made.
    pub fn agent_config(&self) -> &crate::config::AgentConfig {
        self.agent.config()
    }

    /// The end user the turn is for, in a conversation.
    pub fn subscriber(&self) -> Option<&str> {
        self.conversation.as_ref().map(|at| at.subscriber.as_str())
    }

    /// The conversation's id, in a conversation.
    pub fn conversation(&self) -> Option<&str> {
        self.conversation
            .as_ref()
            .map(|at| at.conversation.as_str())
    }

    /// The locale of the person the turn is for, if known.
    pub fn locale(&self) -> Option<&str> {
        self.locale.as_deref()
    }

    /// The model calls of the turn's tools and what they cost.
    pub fn spend(&self) -> &TurnSpend {
        &self.spend
    }

    /// The turn as hooks see it.
    fn for_hooks(&self) -> hook::Turn {
        let turn = hook::Turn::new(self.conversation().unwrap_or_default());
        match &self.locale {
            Some(locale) => turn.with_locale(locale.clone()),
            None => turn,
        }
    }
}
