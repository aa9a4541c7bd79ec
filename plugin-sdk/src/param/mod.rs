//! Parameters of a tool function: the arguments and the extractors.

mod extractors;

use schemars::Schema;

use crate::context::{KnowledgeNeed, SecretSpec};
use crate::{ToolContext, ToolError};

pub(crate) use extractors::secret_bundle;

/// What a call hands to the parameters of a tool: the model's JSON arguments and the
/// call's context.
#[derive(Clone, Copy, Debug)]
pub struct CallInput<'a> {
    arguments: &'a str,
    context: &'a ToolContext,
}

impl<'a> CallInput<'a> {
    /// A call with `arguments` (JSON text) in `context`; for engines (the `engine`
    /// feature): without a way to make one, plugin code can call no tool's entry, nor
    /// extract from a context it built.
    #[cfg(feature = "engine")]
    pub fn new(arguments: &'a str, context: &'a ToolContext) -> Self {
        Self { arguments, context }
    }

    /// A call with no arguments in `context`: what a hook's parameters that are also a
    /// tool's extract from.
    pub(crate) fn of_context(context: &'a ToolContext) -> Self {
        Self {
            arguments: "",
            context,
        }
    }

    /// The arguments as the model sent them (JSON text).
    pub fn arguments(&self) -> &'a str {
        self.arguments
    }

    /// The call's context.
    pub fn context(&self) -> &'a ToolContext {
        self.context
    }
}

/// A type a `#[define_tool]` function can take as a parameter.
///
/// The signature is the declaration: the one arguments struct (`#[derive(ToolArgs)]`),
/// `&ToolContext`, and extractors that take what they need from the call. Each is built
/// by [`ToolParam::extract`] before the tool runs.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a parameter of a tool",
    label = "not a tool parameter",
    note = "a tool takes one arguments struct with `#[derive(Deserialize, JsonSchema, ToolArgs)]` (a struct with named fields, never an enum or a scalar), and extractors: `&ToolContext`, a `#[derive(Secrets)]` struct, `&Audit`, `&State`, `&Artifacts`, `Knowledge<Read>` (`Write`, `Manage`) or `Option<Knowledge<..>>`, `Option<Model>`, `Subscriber`, `Conversation`, `Instance`, `AgentName`, `TurnChannel` or `Option<TurnChannel>`, `History`, `&OAuth`, `&Project`, `Shared<T>` (the plugin's state), `&Abort`",
    note = "to give the model a single value, wrap it in a struct: `struct Args {{ value: T }}`"
)]
pub trait ToolParam {
    /// Whether this parameter is the tool's arguments, deserialized from the model's JSON.
    /// A tool has at most one.
    const ARGUMENTS: bool = false;

    /// Whether this parameter keeps the tool strict; `false` for an arguments type with
    /// `#[tool_args(strict = false)]`.
    const STRICT: bool = true;

    /// The secrets this parameter declares (a `#[derive(Secrets)]` struct's keys).
    const SECRETS: &'static [SecretSpec] = &[];

    /// The knowledge level this parameter needs, for a knowledge extractor.
    const KNOWLEDGE: Option<KnowledgeNeed> = None;

    /// What else of the context the parameter reads, so that the engine builds only that.
    const NEEDS: Needs = Needs::NOTHING;

    /// The strict JSON Schema of the arguments, for the arguments parameter.
    fn input_schema() -> Option<Schema> {
        None
    }

    /// Checks that `arguments` (JSON text) deserializes into this parameter; used by the
    /// unit tests that `#[define_tool(example = ...)]` generates.
    fn check_arguments(arguments: &str) -> Result<(), ToolError> {
        let _ = arguments;
        Ok(())
    }

    /// What the tool function receives for this parameter in a call that lives `'a`:
    /// `Self` for owned values, `&'a ToolContext` for the context.
    type Extracted<'a>;

    /// Builds the parameter for one call.
    fn extract<'a>(input: &CallInput<'a>) -> Result<Self::Extracted<'a>, ToolError>;
}

/// The parts of a call's context a tool reads besides its arguments, secrets and knowledge:
/// the engine builds only these, and offers a tool that needs a conversation only where
/// there is one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Needs {
    /// The turn's conversation: its state, its artifacts, the subscriber or its id.
    pub conversation: bool,
    /// Model access.
    pub model: bool,
    /// The audit logger.
    pub audit: bool,
    /// The context itself (`&ToolContext`: the locale).
    pub locale: bool,
    /// The agent's project root (`&Project`).
    pub project: bool,
    /// The call's abort signal (`&Abort`).
    pub abort: bool,
    /// The engine instance, the agent and the turn's channel (`Instance`, `AgentName`,
    /// `TurnChannel`).
    pub identity: bool,
    /// The conversation's history (`History`).
    pub history: bool,
    /// The subscriber's OAuth grants (`&OAuth`).
    pub oauth: bool,
    /// Its plugin's state (`Shared<T>`), of this type.
    pub state: Option<crate::context::StateType>,
}

impl Needs {
    /// Nothing beyond the arguments.
    pub const NOTHING: Self = Self {
        conversation: false,
        model: false,
        audit: false,
        locale: false,
        project: false,
        abort: false,
        identity: false,
        history: false,
        oauth: false,
        state: None,
    };

    /// What any of `needs` reads.
    pub const fn all_of(needs: &[Needs]) -> Self {
        let mut all = Self::NOTHING;
        let mut i = 0;
        while i < needs.len() {
            all.conversation |= needs[i].conversation;
            all.model |= needs[i].model;
            all.audit |= needs[i].audit;
            all.locale |= needs[i].locale;
            all.project |= needs[i].project;
            all.abort |= needs[i].abort;
            all.identity |= needs[i].identity;
            all.history |= needs[i].history;
            all.oauth |= needs[i].oauth;
            if needs[i].state.is_some() {
                all.state = needs[i].state;
            }
            i += 1;
        }
        all
    }
}
