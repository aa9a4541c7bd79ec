//! [`Engine`]: the one way in. Built from what the binary linked and its configuration,
//! it lists, renders, calls and runs turns. Its one `impl` block below is the whole of
//! its API, each method a delegation: turns, calls and hooks to the [`Runtime`] it holds
//! (`crate::turn`), reloads and external tools to the modules named for them.

mod assemble;
mod backends;
mod builder;
mod dev;
mod error;
mod extensions;
mod linked_config;
mod project_roots;
mod reload;
mod session;

use std::collections::BTreeMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arc_swap::ArcSwap;
use bytes::Bytes;
use plugin_sdk::channel::ChannelDescriptor;
use plugin_sdk::engine::{PluginManifest, RedactValues};
use plugin_sdk::hook::Event;
use tokio::sync::watch;

pub use backends::{
    Backends, OpenConversations, OpenGateway, OpenKnowledge, OpenPanelSecrets, OpenProvider,
    OpenShared, SharedStores,
};
pub use builder::EngineBuilder;
pub use dev::DevSession;
pub use error::{EngineError, UnknownAgent};
pub use reload::Reloaded;
pub use session::Session;

use crate::agent::Agent;
use crate::config::{AttachmentLimits, EngineConfig};
use crate::conversation::Message;
use crate::dispatch::CallError;
use crate::external::{Extensions, Installed, LoadedFile};
use crate::format::Format;
use crate::hooks::Hook;
use crate::outcome::TurnSummary;
use crate::provider::{self as drop_in, DropIns, Provider, ProviderFile};
use crate::redact::LogRedaction;
use crate::stores::{
    ActionRecord, ConversationError, ConversationPage, Owner, RecentCursor, TurnRecord,
};
use crate::tool::Tool;
use crate::turn::attachments::{Attachment, AttachmentError};
use crate::turn::{
    Call, CallFuture, ModelInput, Runtime, Turn, TurnControl, TurnEvent, TurnOutcome,
};

/// The engine: the validated registry of linked plugins, the agents configured over it,
/// and the stores their tools use.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use engine_core::{Call, Engine, Format};
///
/// let engine = Engine::builder().build()?; // everything linked, one agent `default`
/// let catalog = engine.agent("default").unwrap().catalog(Format::OpenAi, "en-US");
/// let turn = engine.turn("default")?.in_conversation("user-1", "conversation-1");
/// let output = engine
///     .call(&turn, Call::new("weather__weather", r#"{"city":"Rome","days":3,"units":null}"#))
///     .await?;
/// # Ok(()) }
/// ```
pub struct Engine {
    /// What turns, calls and hooks run over: the registry and the stores.
    runtime: Runtime,
    /// The agents, and what else a reload replaces: swapped whole, so that a turn (which
    /// holds its agent) finishes on the configuration it started with.
    configured: ArcSwap<reload::Configured>,
    /// Held while `configured` or its external tools are being replaced, so that a reload
    /// and an install of external tools never lose one another's work.
    replacing: std::sync::Mutex<()>,
    /// Held through a reload: one at a time, each built on the one before.
    reloading: std::sync::Mutex<()>,
    /// The providers the builder was given, which a reload keeps.
    given_providers: BTreeMap<String, Arc<dyn Provider>>,
    /// What opens the configuration's parts, at start-up and at each reload.
    backends: Backends,
    /// The log's redactor, which a reload widens with the secrets it brings.
    log_redaction: Option<LogRedaction>,
    /// Ticks when what an agent is offered may have changed: a set of external tools or a
    /// reload (an MCP server tells its clients `tools/list_changed`).
    offers_changed: Arc<watch::Sender<u64>>,
    /// Whether the conversation store was chosen for turns (given, or opened for an agent
    /// that runs them): the first reload that adds such an agent opens it.
    conversations_for_turns: std::sync::atomic::AtomicBool,
    /// The mounted channels, with the agent each runs, in the configuration's order.
    channels: Vec<(&'static ChannelDescriptor, String)>,
}

impl Engine {
    /// A builder over everything this binary linked, with the default configuration.
    pub fn builder() -> EngineBuilder {
        EngineBuilder::default()
    }

    /// The plugins, sorted by namespace, each with its tools sorted by name.
    pub fn plugins(&self) -> impl Iterator<Item = (&'static PluginManifest, &[Tool])> {
        self.runtime.registry.plugins()
    }

    /// Every linked tool, sorted by id, whichever agents equip it.
    pub fn tools(&self) -> &[Tool] {
        self.runtime.registry.tools()
    }

    /// The tool called `name`, by canonical id (`acme:book_appointment`) or wire name
    /// (`acme__book_appointment`), whichever agents equip it.
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        let index = self.runtime.registry.tool_index(name)?;
        Some(&self.runtime.registry.tools()[index])
    }

    /// The linked hooks of `event`, in their declared order: what an agent runs when its
    /// configuration chooses none (see [`Agent::hooks`] for an agent's own).
    pub fn hooks(&self, event: Event) -> &[Hook] {
        self.runtime.registry.hooks.of(event)
    }

    /// Whether a linked hook may replace, regenerate or withhold replies (a
    /// `response_generated` hook that fails closed): the turns of an agent that runs one
    /// are served non-streamed, so that the mutation lands before anything reaches the
    /// user (see [`Agent::hooks_mutate_responses`]).
    pub fn hooks_mutate_responses(&self) -> bool {
        self.runtime.registry.hooks.mutate_responses()
    }

    /// The same turn, its message bringing `attachments`, once they are checked against
    /// the configuration's `[attachments]`: refused whole (the error's
    /// [`status`](AttachmentError::status) is the HTTP answer), or kept as artifacts of
    /// the conversation when the turn begins, and named to the model with their handles.
    pub fn attach(
        &self,
        turn: Turn,
        attachments: Vec<Attachment>,
    ) -> Result<Turn, AttachmentError> {
        if attachments.is_empty() {
            return Ok(turn);
        }
        if turn.conversation().is_none() {
            return Err(AttachmentError::WithoutConversation);
        }
        let config = &self.configured.load().config;
        // A file is kept as an artifact: the smaller of the two limits holds.
        let limits = AttachmentLimits {
            max_bytes: config.attachments.max_bytes.min(config.artifacts.max_bytes),
            ..config.attachments.clone()
        };
        crate::turn::attachments::check(&attachments, &limits)?;
        Ok(turn.with_attachments(attachments))
    }

    /// Whether the engine runs an OAuth broker (an agent has an OAuth client).
    pub fn runs_oauth(&self) -> bool {
        self.runtime.oauth.is_some()
    }

    /// The client the agent `agent` configures now for `provider` (`<namespace>:<id>`).
    fn oauth_client(&self, agent: &str, provider: &str) -> Option<crate::oauth::OAuthClient> {
        let (namespace, id) = provider.split_once(':')?;
        let agent = self.agent(agent)?;
        let (plugin, _) = self
            .plugins()
            .find(|(plugin, _)| plugin.namespace == namespace)?;
        crate::oauth::OAuthClient::of(agent.config(), plugin, id).ok()
    }

    /// The OAuth broker; without one, no sign-in is known.
    fn broker(&self) -> Result<&crate::oauth::Broker, crate::oauth::CallbackError> {
        self.runtime
            .oauth
            .as_deref()
            .ok_or(crate::oauth::CallbackError::Unknown)
    }

    /// Starts the sign-in of the connect link `id` (see [`crate::oauth`]): where to send
    /// the browser, and the `state` to set in its cookie.
    pub async fn oauth_connect(
        &self,
        id: &str,
    ) -> Result<crate::oauth::Started, crate::oauth::CallbackError> {
        self.broker()?
            .start(id, |agent, provider| self.oauth_client(agent, provider))
            .await
    }

    /// Completes a sign-in with the provider's `code`, for the browser whose cookie holds
    /// `cookie`: the grant is kept, sealed, for its agent, subscriber and provider.
    pub async fn oauth_callback(
        &self,
        state: &str,
        cookie: Option<&str>,
        code: &str,
    ) -> Result<crate::oauth::GrantKey, crate::oauth::CallbackError> {
        self.broker()?
            .callback(state, cookie, code, |agent, provider| {
                self.oauth_client(agent, provider)
            })
            .await
    }

    /// The knowledge store, for what operators do beside the tools (listing, uploading,
    /// wiping): `None` when no agent grants knowledge, for then the engine opens none.
    pub fn knowledge_store(&self) -> Option<Arc<dyn plugin_sdk::engine::KnowledgeStore>> {
        self.runtime.knowledge.clone()
    }

    /// The catalog of every linked tool in `format`, for a reader of `locale` (only
    /// MCP's depends on it); an agent's own catalog is [`Agent::catalog`]. Rendered once
    /// and shared: serving a catalog copies no JSON.
    pub fn catalog(&self, format: Format, locale: &str) -> Bytes {
        self.runtime.registry.catalogs.get(format, locale, || {
            self.runtime.registry.tools().iter().collect()
        })
    }

    /// Every linked channel, sorted by name, with the agent it runs when the
    /// configuration mounts it (`[channels.<name>]`).
    pub fn channels(&self) -> impl Iterator<Item = (&'static ChannelDescriptor, Option<&str>)> {
        self.runtime.registry.channels.iter().map(|channel| {
            let agent = self
                .channels
                .iter()
                .find(|(mounted, _)| std::ptr::eq(*mounted, *channel))
                .map(|(_, agent)| agent.as_str());
            (*channel, agent)
        })
    }

    /// The mounted channel called `name`, and the agent whose turns it runs.
    pub fn channel(&self, name: &str) -> Option<(&'static ChannelDescriptor, &str)> {
        self.channels
            .iter()
            .find(|(channel, _)| channel.name == name)
            .map(|(channel, agent)| (*channel, agent.as_str()))
    }

    /// The agents configured now, by name.
    pub fn agents(&self) -> Vec<Arc<Agent>> {
        self.configured.load().agents.clone()
    }

    /// The agent called `name`, as configured now.
    pub fn agent(&self, name: &str) -> Option<Arc<Agent>> {
        self.configured.load().agent(name).cloned()
    }

    /// A turn of `agent` outside any conversation and any session; see
    /// [`Turn::in_conversation`] and [`Engine::session`].
    pub fn turn(&self, agent: &str) -> Result<Turn, UnknownAgent> {
        let agent = self.known_agent(agent)?;
        Ok(self.runtime.new_turn(agent, None))
    }

    /// Calls a tool that `turn`'s agent equips and offers in that turn; the future gives
    /// the tool's output as JSON text, or an error the model can read.
    ///
    /// A tool the agent does not equip is unknown, as if it were not linked; so is one
    /// that needs a conversation, in a turn without one. A staged action is not called
    /// this way: [`Engine::converse`] stages it and performs it after the reply. The tool's context holds its
    /// declared secrets, the agent's grants and the turn's identity, and nothing else.
    /// State it writes is applied only if the call succeeds.
    ///
    /// A tool whose body has no `.await` runs on the first poll, at the cost of a
    /// look-up and serde. Any other runs in a boxed future, polled once inline; only a
    /// tool that then waits sets up the deadline and the cancellation, which need a Tokio
    /// runtime with its timer enabled.
    pub fn call<'a>(&'a self, turn: &'a Turn, call: Call<'a>) -> CallFuture<'a> {
        self.runtime.call(turn, call)
    }

    /// Calls a tool as [`Engine::call`] does, in `turn`'s conversation: with the state
    /// the conversation's tools kept (in an earlier run of the engine too), and keeping
    /// what this call writes there, as a turn would; no turn is recorded. The
    /// conversation is held for the call as a turn holds it, so a call while a turn of
    /// it runs (here or in another process or replica) is refused, and so is a turn
    /// while the call runs. Without a conversation, it is [`Engine::call`].
    pub async fn call_in_conversation(
        &self,
        turn: &Turn,
        call: Call<'_>,
    ) -> Result<String, CallError> {
        self.runtime.call_in_conversation(turn, call).await
    }

    /// Runs one turn of `turn`'s agent for the user's `message` (`None` resumes the
    /// conversation from its last completed step), sending each [`TurnEvent`] to
    /// `events`, the last a [`TurnEvent::Done`].
    ///
    /// The agent needs a `turn` configuration and a provider. A turn in a conversation
    /// reads and extends its stored history; one outside any conversation starts empty
    /// and keeps nothing.
    pub async fn converse(
        &self,
        turn: &Turn,
        message: Option<&str>,
        control: &TurnControl,
        events: &mut (dyn FnMut(TurnEvent) + Send),
    ) -> TurnSummary {
        let redact = self.redact();
        // Held for the whole turn: a provider file removed meanwhile leaves this turn on
        // the provider it started with.
        let dropped_in = self
            .configured
            .load()
            .drop_ins
            .load()
            .provider(turn.agent());
        self.runtime
            .converse(turn, dropped_in, message, control, events, &redact)
            .await
    }

    /// Runs the hooks of one turn of `turn`'s conversation for the user's `message` through the hooks,
    /// asking `generate` (the engine's model call) for each reply. `first` marks the
    /// conversation's first turn, which runs `conversation_start` hooks.
    ///
    /// Rules: the first halt ends the turn before the model; injected context reaches
    /// every generation of the turn; after each reply, one pass of `response_generated`
    /// hooks decides, and a regeneration beats a replacement. A failed hook that declares
    /// `fail_closed` ends the turn with its text, wherever it runs. Replays stop at
    /// [`Limits::max_regenerations`](crate::Limits::max_regenerations): a regeneration asked for past it is
    /// refused (logged), and the pass's replacement, if any, else the last reply, is sent.
    ///
    /// An error from `generate` ends the turn with that error. Once the reply is
    /// delivered, call [`Engine::response_sent`].
    pub async fn run_turn<G, F, E>(
        &self,
        turn: &Turn,
        message: &str,
        first: bool,
        generate: G,
    ) -> Result<TurnOutcome, E>
    where
        G: FnMut(ModelInput) -> F,
        F: Future<Output = Result<String, E>>,
    {
        self.runtime
            .run_turn_within(turn, message, first, generate, &|| true)
            .await
    }

    /// Runs the `response_sent` hooks of `turn`, once `response` to `message` is out.
    pub async fn response_sent(&self, turn: &Turn, message: &str, response: &str) {
        self.runtime.response_sent(turn, message, response).await;
    }

    /// The stored messages of `conversation`, oldest first.
    pub async fn conversation(
        &self,
        conversation: &str,
    ) -> Result<Vec<Message>, ConversationError> {
        self.runtime
            .conversations
            .load_full()
            .load(conversation)
            .await
    }

    /// The turns of `conversation` that were recorded (how each ended, its usage and
    /// cost), oldest first. A turn refused before it began records none.
    pub async fn conversation_turns(
        &self,
        conversation: &str,
    ) -> Result<Vec<TurnRecord>, ConversationError> {
        self.runtime
            .conversations
            .load_full()
            .turns(conversation)
            .await
    }

    /// Whose `conversation` is (its agent and subscriber), if anyone's.
    pub async fn conversation_owner(
        &self,
        conversation: &str,
    ) -> Result<Option<Owner>, ConversationError> {
        self.runtime
            .conversations
            .load_full()
            .owner(conversation)
            .await
    }

    /// `agent`'s conversations, the one whose last turn was recorded most recently first,
    /// a page of at most `limit` after `after` (the cursor the page before answered).
    pub async fn conversations(
        &self,
        agent: &str,
        limit: usize,
        after: Option<&RecentCursor>,
    ) -> Result<ConversationPage, ConversationError> {
        self.runtime
            .conversations
            .load_full()
            .recent(agent, limit, after)
            .await
    }

    /// The staged actions `conversation`'s turns performed (or tried to), oldest first.
    pub async fn conversation_actions(
        &self,
        conversation: &str,
    ) -> Result<Vec<ActionRecord>, ConversationError> {
        self.runtime
            .conversations
            .load_full()
            .actions(conversation)
            .await
    }

    /// A new session of `agent`, with the whole of its session cap.
    pub fn session(&self, agent: &str) -> Result<Session, UnknownAgent> {
        let agent = self.known_agent(agent)?;
        Ok(Session::new(self.runtime.id, agent.name()))
    }

    /// A new session of the agent `session` is of, with the whole of its session cap;
    /// refused if a reload removed the agent.
    pub fn session_like(&self, session: &Session) -> Result<Session, UnknownAgent> {
        self.session(session.agent_in(self.runtime.id))
    }

    /// A turn of `session`'s agent (as configured now) outside any conversation, spending
    /// from the session's budget; see [`Turn::in_conversation`]. Refused if a reload
    /// removed the agent: a session cannot keep an agent the operator took away.
    pub fn turn_in(&self, session: &Session) -> Result<Turn, UnknownAgent> {
        let agent = self.session_agent(session)?;
        let budget = session.budget(&agent);
        Ok(self.runtime.new_turn(agent, budget))
    }

    /// The agent of `session` as configured now: a session sees its agent's new tools
    /// and grants after a reload (its budget stays); refused if the reload removed it.
    pub fn session_agent(&self, session: &Session) -> Result<Arc<Agent>, UnknownAgent> {
        self.known_agent(session.agent_in(self.runtime.id))
    }

    /// Replaces the agents and providers with those of `config`, checked as at start-up:
    /// the next turn, call, session and catalog see the new ones; a turn under way
    /// finishes on the agent it started with. A configuration with a problem is refused
    /// whole, and the engine keeps the one it has.
    ///
    /// What the engine opened at start-up stays as it is: the data directory, the
    /// stores' limits, the gateway, the mounted channels and the extensions directory.
    /// A configuration that changes one of them, or whose first agent to grant knowledge
    /// comes into an engine that opened no knowledge store, is refused with what needs a
    /// restart. The first agent to run turns in an engine that had none opens the
    /// conversation store start-up would have. A spend window whose cap and length
    /// are unchanged keeps counting (a reload is no way to a fresh budget); so does a
    /// plugin's state whose settings are unchanged. MCP clients hear
    /// `tools/list_changed` ([`extensions_changed`](Self::extensions_changed)).
    pub fn reload(&self, config: EngineConfig) -> Result<Reloaded, EngineError> {
        reload::reload(self, config)
    }

    /// Installs the external tools `files` gave, in place of those installed before: each
    /// file is checked against what is linked and the files before it (in path order),
    /// and one whose tool clashes, or that [`refuses_extension`](Self::refuses_extension)
    /// refuses, is skipped with its error. The next call, turn and
    /// catalog see the new set; calls in flight finish on the old one. Gives the files
    /// as installed, each with its state and error.
    ///
    /// A file that offered its tools before keeps them over a new file that clashes with
    /// it: dropping a file in never takes a working tool away. Errors are redacted of
    /// every configured secret (a server's message may quote one). Clients hear of the
    /// change ([`extensions_changed`](Self::extensions_changed)) only if what is offered
    /// changed.
    pub fn install_extensions(&self, files: Vec<LoadedFile>) -> Arc<Installed> {
        extensions::install(self, files)
    }

    /// Installs the drop-in providers `files` gave (a read of the providers directory),
    /// in place of those installed before: each file is checked against the configured
    /// providers and the files before it, and skipped with its error if it clashes or
    /// lies in a project root; an agent that names a file's provider and cannot use it
    /// (its key, see the guide) gets none, and the file is listed `degraded`, saying
    /// why, while the other agents use it. The next turn of an agent whose
    /// `turn.provider` a file offers uses it; turns under way keep the provider they
    /// started with, and the next turn of an agent whose provider's file went fails,
    /// saying so. Gives the files as installed, each with its state, its error
    /// (redacted of every configured secret) and the agents using it.
    pub fn install_providers(&self, files: Vec<ProviderFile>) -> Vec<ProviderFile> {
        let _replacing = self
            .replacing
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let configured = self.configured.load();
        let drop_ins = self.equip_drop_ins(files, &configured.config, &configured.redact);
        for file in drop_ins.files() {
            if let Some(error) = &file.error {
                tracing::warn!(file = %file.path.display(), "provider file: {error}");
            }
        }
        let files = drop_ins.files().to_vec();
        configured.drop_ins.store(Arc::new(drop_ins));
        files
    }

    /// The drop-in provider files installed now, each with its state and error.
    pub fn provider_files(&self) -> Vec<ProviderFile> {
        self.configured.load().drop_ins.load().files().to_vec()
    }

    /// `files` checked and equipped for the agents of `config`.
    fn equip_drop_ins(
        &self,
        files: Vec<ProviderFile>,
        config: &EngineConfig,
        redact: &RedactValues,
    ) -> DropIns {
        let given = self.given_providers.keys().cloned().collect();
        drop_ins(files, config, &given, self.backends.provider, redact)
    }

    /// Why the external tool file `file`, which runs the programs `runs`, may not be
    /// installed, if it may not: it, or one of them, lies in an agent's project root,
    /// where the model writes (it would run what the model wrote). A loader asks before
    /// it starts anything; [`install_extensions`](Self::install_extensions) skips such a
    /// file whatever the loader did.
    pub fn refuses_extension(&self, file: &Path, runs: &[PathBuf]) -> Option<String> {
        project_roots::in_a_root(&self.configured.load().config, file, runs)
    }

    /// The external tools installed now, with every file's state and error.
    pub fn extensions(&self) -> Arc<Installed> {
        self.extensions_now().current()
    }

    /// The entries of the agent `agent`'s `external_tools` list that no installed file
    /// provides: a typo, or a file not there yet. `engine check` shows them.
    pub fn unprovided_external_tools(&self, agent: &str) -> Vec<String> {
        extensions::unprovided(self, agent)
    }

    /// A receiver that changes each time what an agent is offered may have changed: a set
    /// of external tools that offers something else was installed, or the configuration
    /// was reloaded.
    pub fn extensions_changed(&self) -> watch::Receiver<u64> {
        self.offers_changed.subscribe()
    }

    /// The agent called `name`, as configured now, or which agents there are.
    fn known_agent(&self, name: &str) -> Result<Arc<Agent>, UnknownAgent> {
        let configured = self.configured.load();
        configured.agent(name).cloned().ok_or_else(|| UnknownAgent {
            name: name.to_owned(),
            known: configured
                .agents
                .iter()
                .map(|known| known.name().to_owned())
                .collect(),
        })
    }

    /// The redactor of every secret configured now.
    fn redact(&self) -> Arc<RedactValues> {
        Arc::clone(&self.configured.load().redact)
    }

    /// The external tools as the agents configured now equip them.
    fn extensions_now(&self) -> Arc<Extensions> {
        Arc::clone(&self.configured.load().extensions)
    }
}

/// `files` checked against the providers `config` and the builder (`given`) name, one
/// another, and `config`'s project roots: a file that lies in one is skipped (the model
/// writes there: a provider file it wrote would send the conversations elsewhere). What
/// start-up, a reload and an install all take as the files offered.
fn checked_provider_files(
    files: Vec<ProviderFile>,
    config: &EngineConfig,
    given: &std::collections::BTreeSet<String>,
) -> Vec<ProviderFile> {
    let mut files = drop_in::checked(files, config, given);
    for file in &mut files {
        if let Some(refused) = project_roots::in_a_root(config, &file.path, &[]) {
            file.skip(refused);
        }
    }
    files
}

/// `files` as the agents of `config` use them ([`checked_provider_files`], then each
/// agent's provider made by `open`).
fn drop_ins(
    files: Vec<ProviderFile>,
    config: &EngineConfig,
    given: &std::collections::BTreeSet<String>,
    open: Option<OpenProvider>,
    redact: &RedactValues,
) -> DropIns {
    let files = checked_provider_files(files, config, given);
    DropIns::equip(files, config, open, redact)
}
