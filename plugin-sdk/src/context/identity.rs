//! Where a call runs: the engine instance, the agent, and the channel its turn came
//! through, each from the engine and never from the model, so that a plugin can key its
//! own storage by them without asking.

use std::sync::Arc;

/// The engine instance a call runs in: its slug, from the configuration's `instance`
/// (`default` when it sets none), the same on every replica of one deployment and across
/// restarts. Key what a plugin keeps outside the engine by it, so that two deployments
/// sharing a database do not mix.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Instance(Arc<str>);

/// The agent a call runs for: its name in the engine's configuration.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AgentName(Arc<str>);

macro_rules! named {
    ($name:ident, $get:ident) => {
        impl $name {
            /// A constructor for unit tests that call a tool directly (an engine fills
            /// it from its configuration).
            pub fn new(value: impl Into<Arc<str>>) -> Self {
                Self(value.into())
            }

            /// The value.
            pub fn $get(&self) -> &str {
                &self.0
            }
        }
    };
}

named!(Instance, slug);
named!(AgentName, name);

/// The channel a turn came through, as a plugin keys what it keeps per chat: the
/// channel's name (a `#[define_channel]` adapter's, `api` for the engine's turn route,
/// `cli` for the command line) and the conversation's id as that channel gave it (the
/// engine keeps a channel's conversations apart from every other's under ids of its own;
/// [`Conversation`](crate::turn::Conversation) is that one).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TurnChannel {
    name: Arc<str>,
    conversation: Arc<str>,
}

impl TurnChannel {
    /// The channel `name`'s conversation `conversation`; for engines, and for unit tests
    /// that call a tool directly.
    pub fn new(name: impl Into<Arc<str>>, conversation: impl Into<Arc<str>>) -> Self {
        Self {
            name: name.into(),
            conversation: conversation.into(),
        }
    }

    /// The channel's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The conversation's id, as the channel gave it.
    pub fn conversation(&self) -> &str {
        &self.conversation
    }
}

/// The instance and the agent of a call, as the engine sets them on its context.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallIdentity {
    /// The engine instance.
    pub instance: Instance,
    /// The agent.
    pub agent: AgentName,
}
