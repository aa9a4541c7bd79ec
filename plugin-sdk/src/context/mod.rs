//! What a tool receives from the engine besides its arguments, each piece an extractor:
//! a parameter type of the tool function, so a tool's needs show in its signature.
//!
//! | parameter | what it is |
//! | --- | --- |
//! | `&ToolContext` | the call's locale |
//! | a `#[derive(Secrets)]` struct | the secrets it declares, and no other |
//! | `&Audit` | the audit logger, which redacts secrets |
//! | `&State` | the conversation's state, over a snapshot |
//! | `&Artifacts` | files handed between tools of one conversation |
//! | `Knowledge<Read>` (`Write`, `Manage`), or in an `Option` | the agent's knowledge base |
//! | `Option<Model>` | model access, by tier |
//! | `Subscriber`, `Conversation` | the turn's identity |
//! | `Instance`, `AgentName`, `TurnChannel` | the engine instance, the agent, the channel the turn came through |
//! | `History` | the conversation's recent messages, read-only |
//! | `&Project` | the agent's project root, as a directory handle |
//! | `Shared<T>` | the plugin's state, built once per agent from its settings |
//! | `&Abort` | the call's abort signal: its deadline, and whether anyone still waits |
//!
//! Nothing else: no model client or provider, no registry, no system prompt or catalog,
//! no database handle, no logger that does not redact.

mod abort;
mod artifacts;
mod audit;
mod history;
mod identity;
mod knowledge;
mod model;
mod oauth;
mod project;
mod redact;
mod secret;
mod shared;
mod state;
mod turn;

use std::fmt;

use abort::FireOnDrop;
pub use abort::{Abort, Aborted};
pub use artifacts::{Artifact, ArtifactError, ArtifactHandle, ArtifactStore, Artifacts};
pub use audit::{Audit, AuditSink};
pub use history::{
    History, HistoryCursor, HistoryError, HistoryMessage, HistoryPage, HistoryRole,
    HistorySnapshot, HistorySource, RecentMessages, ToolCallSummary,
};
pub use identity::{AgentName, CallIdentity, Instance, TurnChannel};
pub use knowledge::{
    CanWrite, Document, DocumentSummary, Knowledge, KnowledgeError, KnowledgeGrant, KnowledgeLevel,
    KnowledgeNeed, KnowledgeStore, Level, ListCursor, Listing, Manage, Mutation, Origin, Read,
    Refusal, Scope, SearchError, SearchHit, Write, Written,
};
pub use model::{
    ChatMessage, ChatReply, ChatRequest, Model, ModelAccess, ModelError, Role, SpendCap, Tier,
};
pub use oauth::{AccessToken, OAuth, OAuthBroker, OAuthError, OAuthProvider};
pub use project::{Project, ProjectLimits};
pub use redact::{Redact, RedactValues};
pub use secret::{FromSecret, Secret, SecretBundle, SecretKind, SecretSpec};
use shared::AnyState;
pub use shared::{dotted_key, PluginState, SettingsProblem, Shared, StateBuilder, StateType};
pub use state::{State, StateMap, StateWrites};
pub use turn::{Conversation, Subscriber, TurnIdentity};

use crate::ToolError;

/// The context of one tool call, built by the engine for the agent and turn it runs in.
///
/// Take it as `ctx: &ToolContext` for the locale; every other piece is its own
/// extractor (see the module's table). A context from [`ToolContext::new`] has none of
/// them: the `with_*` methods are for engines and for tests that call a tool by hand.
#[non_exhaustive]
pub struct ToolContext {
    locale: Option<String>,
    turn: Option<TurnIdentity>,
    identity: Option<CallIdentity>,
    channel: Option<TurnChannel>,
    history: Option<History>,
    secrets: Vec<(String, Secret)>,
    audit: Audit,
    state: Option<State>,
    artifacts: Option<Artifacts>,
    knowledge: Option<KnowledgeGrant>,
    oauth: Option<OAuth>,
    model: Option<Model>,
    project: Option<Project>,
    /// The state of the plugin whose tool is called, for `Shared<T>`.
    plugin_state: Option<AnyState>,
    /// The call's abort signal, fired when the context is dropped: the engine keeps the
    /// context for as long as it waits for the call.
    abort: FireOnDrop,
}

impl Default for ToolContext {
    fn default() -> Self {
        Self::new()
    }
}

impl ToolContext {
    /// A context for a call outside any conversation (tests, the command line).
    pub const fn new() -> Self {
        Self {
            locale: None,
            turn: None,
            identity: None,
            channel: None,
            history: None,
            secrets: Vec::new(),
            audit: Audit::EMPTY,
            state: None,
            artifacts: None,
            knowledge: None,
            oauth: None,
            model: None,
            project: None,
            plugin_state: None,
            abort: FireOnDrop(Abort::NEVER),
        }
    }

    /// A context with nothing in it, shared: what an engine hands a tool whose parameters
    /// read nothing of their context, at no cost per call.
    pub fn empty() -> &'static ToolContext {
        static EMPTY: ToolContext = ToolContext::new();
        &EMPTY
    }

    /// The same context, for a reader of `locale` (a BCP 47 tag).
    pub fn with_locale(mut self, locale: impl Into<String>) -> Self {
        self.locale = Some(locale.into());
        self
    }

    /// The same context, in the turn of `subscriber` in `conversation`.
    pub fn with_turn(
        mut self,
        subscriber: impl Into<String>,
        conversation: impl Into<String>,
    ) -> Self {
        let turn = TurnIdentity {
            subscriber: subscriber.into(),
            conversation: conversation.into(),
        };
        self.audit.for_subscriber(&turn.subscriber);
        self.turn = Some(turn);
        self
    }

    /// The same context, in the engine instance `instance`, for the agent `agent`.
    pub fn with_identity(mut self, instance: Instance, agent: AgentName) -> Self {
        self.identity = Some(CallIdentity { instance, agent });
        self
    }

    /// The same context, in a turn that came through `channel`.
    pub fn with_channel(mut self, channel: TurnChannel) -> Self {
        self.channel = Some(channel);
        self
    }

    /// The same context, reading the conversation's history from `history`.
    pub fn with_history(mut self, history: History) -> Self {
        self.history = Some(history);
        self
    }

    /// The same context, holding the secret `key`. The engine adds only the keys the
    /// tool declares.
    pub fn with_secret(mut self, key: impl Into<String>, value: Secret) -> Self {
        self.audit.redact_too(value.expose());
        self.secrets.push((key.into(), value));
        self
    }

    /// The same context, holding the `select` secret `key`: one of the choices its
    /// plugin declares, so the audit logger does not redact it.
    pub fn with_chosen(mut self, key: impl Into<String>, value: Secret) -> Self {
        self.secrets.push((key.into(), value));
        self
    }

    /// The same context, auditing through `audit`.
    pub fn with_audit(mut self, audit: Audit) -> Self {
        let before = std::mem::replace(&mut self.audit, audit);
        self.audit.absorb(before);
        self
    }

    /// The same context, with the conversation's state as `state`.
    pub fn with_state(mut self, state: State) -> Self {
        self.state = Some(state);
        self
    }

    /// The same context, with the conversation's artifacts.
    pub fn with_artifacts(mut self, artifacts: Artifacts) -> Self {
        self.artifacts = Some(artifacts);
        self
    }

    /// The same context, with the subscriber's OAuth grants for the plugin's providers.
    pub fn with_oauth(mut self, oauth: OAuth) -> Self {
        self.oauth = Some(oauth);
        self
    }

    /// The same context, with what the agent grants of its knowledge base.
    pub fn with_knowledge(mut self, grant: KnowledgeGrant) -> Self {
        self.knowledge = Some(grant);
        self
    }

    /// The same context, with model access (the agent grants it).
    pub fn with_model(mut self, model: Model) -> Self {
        self.model = Some(model);
        self
    }

    /// The same context, in the agent's project.
    pub fn with_project(mut self, project: Project) -> Self {
        self.project = Some(project);
        self
    }

    /// The same context, with the called tool's plugin's state (as the engine builds it
    /// from the agent's settings for the plugin), for [`Shared<T>`](crate::shared::Shared).
    pub fn with_plugin_state<T: PluginState>(mut self, state: Shared<T>) -> Self {
        self.plugin_state = Some(state.into_any());
        self
    }

    /// The same context, with a plugin's state as an engine holds it, type-erased (what
    /// [`StateBuilder::build`](crate::engine::StateBuilder::build) returns).
    pub fn with_any_plugin_state(
        mut self,
        state: std::sync::Arc<dyn std::any::Any + Send + Sync>,
    ) -> Self {
        self.plugin_state = Some(state);
        self
    }

    /// The same context, with the call's abort signal; dropping the context fires it.
    pub fn with_abort(mut self, abort: Abort) -> Self {
        self.abort = FireOnDrop(abort);
        self
    }

    pub(crate) fn abort(&self) -> &Abort {
        &self.abort.0
    }

    /// The locale of the person the turn is for, when the engine knows it.
    pub fn locale(&self) -> Option<&str> {
        self.locale.as_deref()
    }

    pub(crate) fn turn(&self) -> Option<&TurnIdentity> {
        self.turn.as_ref()
    }

    pub(crate) fn identity(&self) -> Option<&CallIdentity> {
        self.identity.as_ref()
    }

    pub(crate) fn channel(&self) -> Option<&TurnChannel> {
        self.channel.as_ref()
    }

    pub(crate) fn history(&self) -> Option<&History> {
        self.history.as_ref()
    }

    pub(crate) fn state(&self) -> Option<&State> {
        self.state.as_ref()
    }

    /// What redacts the call's audit records (the engine's redactor, and the call's own
    /// secrets): for an engine that redacts the rest of what the call gives back alike.
    #[cfg(feature = "engine")]
    pub fn redactor(&self) -> impl Redact + '_ {
        audit::CallRedactor(&self.audit)
    }

    pub(crate) fn audit(&self) -> &Audit {
        &self.audit
    }

    pub(crate) fn artifacts(&self) -> Option<&Artifacts> {
        self.artifacts.as_ref()
    }

    pub(crate) fn knowledge(&self) -> Option<&KnowledgeGrant> {
        self.knowledge.as_ref()
    }

    pub(crate) fn oauth(&self) -> Option<&OAuth> {
        self.oauth.as_ref()
    }

    pub(crate) fn project(&self) -> Option<&Project> {
        self.project.as_ref()
    }

    pub(crate) fn plugin_state(&self) -> Option<&AnyState> {
        self.plugin_state.as_ref()
    }

    pub(crate) fn model(&self) -> Option<Model> {
        self.model.clone()
    }

    /// The state writes of the call, for the engine to apply once the call succeeded.
    pub fn take_state_writes(&self) -> StateWrites {
        self.state
            .as_ref()
            .map(State::take_writes)
            .unwrap_or_default()
    }
}

impl fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let keys: Vec<&str> = self.secrets.iter().map(|(key, _)| key.as_str()).collect();
        f.debug_struct("ToolContext")
            .field("locale", &self.locale)
            .field("turn", &self.turn)
            .field("identity", &self.identity)
            .field("channel", &self.channel)
            .field("history", &self.history.is_some())
            .field("secrets", &keys)
            .field("artifacts", &self.artifacts.is_some())
            .field(
                "knowledge",
                &self.knowledge.as_ref().map(KnowledgeGrant::granted),
            )
            .field("model", &self.model.is_some())
            .field("project", &self.project)
            .finish_non_exhaustive()
    }
}

/// Builds a secret bundle from the secrets `context` holds.
pub(crate) fn secret_bundle_from<B: SecretBundle>(context: &ToolContext) -> Result<B, ToolError> {
    let secrets = &context.secrets;
    let lookup = |key: &str| {
        secrets
            .iter()
            .find(|(held, _)| held == key)
            .map(|(_, value)| value.clone())
    };
    B::from_values(&lookup).map_err(|key| {
        ToolError::new(format!(
            "the secret `{key}` is not configured for this agent"
        ))
    })
}
