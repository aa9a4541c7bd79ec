//! The extractors of the call's context as tool parameters: what each reads of the
//! context, and the error a call gets when the context has none of it.

use crate::abort::Abort;
use crate::artifacts::Artifacts;
use crate::audit::Audit;
use crate::context::{
    secret_bundle_from, AgentName, History, Instance, KnowledgeNeed, SecretBundle, StateType,
    TurnChannel,
};
use crate::knowledge::{Knowledge, Level};
use crate::model::Model;
use crate::oauth::OAuth;
use crate::project::Project;
use crate::shared::{PluginState, Shared};
use crate::state::State;
use crate::turn::{Conversation, Subscriber};
use crate::{ToolContext, ToolError};

use super::{CallInput, Needs, ToolParam};

impl ToolParam for &ToolContext {
    const NEEDS: Needs = Needs {
        locale: true,
        ..Needs::NOTHING
    };
    type Extracted<'a> = &'a ToolContext;

    fn extract<'a>(input: &CallInput<'a>) -> Result<&'a ToolContext, ToolError> {
        Ok(input.context())
    }
}

impl ToolParam for &Audit {
    const NEEDS: Needs = Needs {
        audit: true,
        ..Needs::NOTHING
    };
    type Extracted<'a> = &'a Audit;

    fn extract<'a>(input: &CallInput<'a>) -> Result<&'a Audit, ToolError> {
        Ok(input.context().audit())
    }
}

impl ToolParam for &State {
    const NEEDS: Needs = Needs {
        conversation: true,
        ..Needs::NOTHING
    };
    type Extracted<'a> = &'a State;

    fn extract<'a>(input: &CallInput<'a>) -> Result<&'a State, ToolError> {
        input.context().state().ok_or_else(|| {
            ToolError::new(
                "this tool keeps conversation state, and was called outside a conversation",
            )
        })
    }
}

impl ToolParam for &Artifacts {
    const NEEDS: Needs = Needs {
        conversation: true,
        ..Needs::NOTHING
    };
    type Extracted<'a> = &'a Artifacts;

    fn extract<'a>(input: &CallInput<'a>) -> Result<&'a Artifacts, ToolError> {
        input.context().artifacts().ok_or_else(|| {
            ToolError::new("this tool hands files over through the conversation's artifacts, and was called outside a conversation")
        })
    }
}

impl<L: Level> ToolParam for Knowledge<L> {
    const KNOWLEDGE: Option<KnowledgeNeed> = Some(KnowledgeNeed {
        level: L::LEVEL,
        required: true,
    });
    // Every knowledge call is audited, with the tool and the subscriber.
    const NEEDS: Needs = Needs {
        audit: true,
        ..Needs::NOTHING
    };
    type Extracted<'a> = Knowledge<L>;

    fn extract<'a>(input: &CallInput<'a>) -> Result<Knowledge<L>, ToolError> {
        knowledge_at(input).ok_or_else(|| {
            ToolError::new(format!(
                "this tool needs the knowledge base at `{}`, which this agent does not grant",
                L::LEVEL.as_str()
            ))
        })
    }
}

impl<L: Level> ToolParam for Option<Knowledge<L>> {
    const KNOWLEDGE: Option<KnowledgeNeed> = Some(KnowledgeNeed {
        level: L::LEVEL,
        required: false,
    });
    // Every knowledge call is audited, with the tool and the subscriber.
    const NEEDS: Needs = Needs {
        audit: true,
        ..Needs::NOTHING
    };
    type Extracted<'a> = Option<Knowledge<L>>;

    fn extract<'a>(input: &CallInput<'a>) -> Result<Option<Knowledge<L>>, ToolError> {
        Ok(knowledge_at(input))
    }
}

fn knowledge_at<L: Level>(input: &CallInput<'_>) -> Option<Knowledge<L>> {
    let context = input.context();
    context.knowledge()?.at(context.audit())
}

impl ToolParam for Option<Model> {
    const NEEDS: Needs = Needs {
        model: true,
        ..Needs::NOTHING
    };
    type Extracted<'a> = Option<Model>;

    fn extract<'a>(input: &CallInput<'a>) -> Result<Option<Model>, ToolError> {
        Ok(input.context().model())
    }
}

impl ToolParam for &Abort {
    const NEEDS: Needs = Needs {
        abort: true,
        ..Needs::NOTHING
    };
    type Extracted<'a> = &'a Abort;

    fn extract<'a>(input: &CallInput<'a>) -> Result<&'a Abort, ToolError> {
        Ok(input.context().abort())
    }
}

impl ToolParam for &Project {
    const NEEDS: Needs = Needs {
        project: true,
        ..Needs::NOTHING
    };
    type Extracted<'a> = &'a Project;

    fn extract<'a>(input: &CallInput<'a>) -> Result<&'a Project, ToolError> {
        input.context().project().ok_or_else(|| {
            ToolError::new(
                "this tool works on the agent's project files, and the agent has no project root",
            )
        })
    }
}

impl<T: PluginState> ToolParam for Shared<T> {
    const NEEDS: Needs = Needs {
        state: Some(StateType::of::<T>()),
        ..Needs::NOTHING
    };
    type Extracted<'a> = Shared<T>;

    fn extract<'a>(input: &CallInput<'a>) -> Result<Shared<T>, ToolError> {
        let state = input.context().plugin_state().ok_or_else(|| {
            ToolError::new("this tool needs its plugin's settings, and the agent configures none")
        })?;
        Shared::from_any(state).ok_or_else(|| {
            ToolError::new(format!(
                "this tool takes `Shared<{}>`, which is not its plugin's state",
                std::any::type_name::<T>()
            ))
        })
    }
}

macro_rules! turn_identity {
    ($($name:ident, $what:literal;)*) => {$(
        impl ToolParam for $name {
            const NEEDS: Needs = Needs {
                conversation: true,
                ..Needs::NOTHING
            };
            type Extracted<'a> = $name;

            fn extract<'a>(input: &CallInput<'a>) -> Result<$name, ToolError> {
                match input.context().turn() {
                    Some(turn) => Ok($name::from_turn(turn)),
                    None => Err(ToolError::new(concat!(
                        "this tool needs the ",
                        $what,
                        " of a turn, and was called outside a conversation"
                    ))),
                }
            }
        }
    )*};
}

turn_identity! {
    Subscriber, "subscriber";
    Conversation, "conversation";
}

macro_rules! call_identity {
    ($($name:ident, $field:ident;)*) => {$(
        impl ToolParam for $name {
            const NEEDS: Needs = Needs {
                identity: true,
                ..Needs::NOTHING
            };
            type Extracted<'a> = $name;

            fn extract<'a>(input: &CallInput<'a>) -> Result<$name, ToolError> {
                // Only a context built by hand has none.
                let identity = input.context().identity().ok_or_else(|| {
                    ToolError::new("this tool needs the engine instance and the agent it runs for, and was called outside an engine")
                })?;
                Ok(identity.$field.clone())
            }
        }
    )*};
}

call_identity! {
    Instance, instance;
    AgentName, agent;
}

impl ToolParam for TurnChannel {
    // A channel brings a turn of a conversation: a tool that reads it is offered there.
    const NEEDS: Needs = Needs {
        conversation: true,
        identity: true,
        ..Needs::NOTHING
    };
    type Extracted<'a> = TurnChannel;

    fn extract<'a>(input: &CallInput<'a>) -> Result<TurnChannel, ToolError> {
        input.context().channel().cloned().ok_or_else(|| {
            ToolError::new("this tool needs the channel its turn came through, and was called outside a channel's turn")
        })
    }
}

impl ToolParam for Option<TurnChannel> {
    // Offered with or without a conversation: the channel is there when there is one.
    const NEEDS: Needs = Needs {
        identity: true,
        ..Needs::NOTHING
    };
    type Extracted<'a> = Option<TurnChannel>;

    fn extract<'a>(input: &CallInput<'a>) -> Result<Option<TurnChannel>, ToolError> {
        Ok(input.context().channel().cloned())
    }
}

impl ToolParam for &OAuth {
    // Tokens are the subscriber's: a tool that takes them is offered in a conversation.
    const NEEDS: Needs = Needs {
        conversation: true,
        oauth: true,
        ..Needs::NOTHING
    };
    type Extracted<'a> = &'a OAuth;

    fn extract<'a>(input: &CallInput<'a>) -> Result<&'a OAuth, ToolError> {
        input.context().oauth().ok_or_else(|| {
            ToolError::new("this tool needs the user's OAuth grants, and was called outside a conversation or by an agent without an OAuth client for its plugin")
        })
    }
}

impl ToolParam for History {
    const NEEDS: Needs = Needs {
        conversation: true,
        history: true,
        ..Needs::NOTHING
    };
    type Extracted<'a> = History;

    fn extract<'a>(input: &CallInput<'a>) -> Result<History, ToolError> {
        input.context().history().cloned().ok_or_else(|| {
            ToolError::new(
                "this tool reads the conversation's history, and was called outside a conversation",
            )
        })
    }
}

/// Builds a secret bundle from the call's secrets, for the code `#[derive(Secrets)]`
/// generates.
pub(crate) fn secret_bundle<B: SecretBundle>(input: &CallInput<'_>) -> Result<B, ToolError> {
    secret_bundle_from(input.context())
}
