//! [`Engine`]: the one way in. Built from what the binary linked and its configuration,
//! it lists, renders, calls and runs turns.

mod agent;
mod assemble;
mod backends;
mod builder;
mod call;
mod context;
mod converse;
mod error;
mod extensions;
mod linked_config;
mod project_roots;
mod reload;
mod session;
mod turn;

use std::collections::BTreeMap;
use std::sync::Arc;

use arc_swap::ArcSwap;
use bytes::Bytes;
use plugin_sdk::channel::ChannelDescriptor;
use plugin_sdk::engine::{ArtifactStore, KnowledgeStore, PluginManifest, RedactValues};
use plugin_sdk::hook::Event;

pub use agent::Agent;
pub use backends::{
    Backends, OpenConversations, OpenGateway, OpenKnowledge, OpenProvider, OpenShared, SharedStores,
};
pub use builder::EngineBuilder;
pub use call::{Call, CallFuture};
pub use converse::{TurnControl, TurnEvent};
pub use error::EngineError;
pub use reload::Reloaded;
pub use session::Session;
pub use turn::{ModelInput, Turn, TurnEnd, TurnOutcome, UnknownAgent};

use crate::format::Format;
use crate::hooks::Hook;
use crate::model::{ModelGateway, SpendLedger};
use crate::provider::Provider;
use crate::redact::LogRedaction;
use crate::registry::Registry;
use crate::stores::{ConversationStates, Conversations};
use crate::tool::Tool;

/// Which engine made a turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct EngineId(u64);

impl EngineId {
    fn next() -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        Self(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }
}

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
    id: EngineId,
    registry: Arc<Registry>,
    /// The agents, and what else a reload replaces: swapped whole, so that a turn (which
    /// holds its agent) finishes on the configuration it started with.
    configured: ArcSwap<reload::Configured>,
    /// Held while `configured` or its external tools are being replaced, so that a reload
    /// and an install of external tools never lose one another's work.
    pub(crate) replacing: std::sync::Mutex<()>,
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
    pub(crate) offers_changed: Arc<tokio::sync::watch::Sender<u64>>,
    /// Whether the conversation store was chosen for turns (given, or opened for an agent
    /// that runs them): the first reload that adds such an agent opens it.
    conversations_for_turns: std::sync::atomic::AtomicBool,
    states: ConversationStates,
    artifacts: Arc<dyn ArtifactStore>,
    /// Where agents' spend windows are counted across replicas, with a shared database.
    spend_ledger: Option<Arc<dyn SpendLedger>>,
    knowledge: Option<Arc<dyn KnowledgeStore>>,
    gateway: Option<Arc<dyn ModelGateway>>,
    conversations: ArcSwap<Conversations>,
    /// The conversations with a turn under way.
    running: std::sync::Mutex<std::collections::HashSet<String>>,
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
        self.registry.plugins()
    }

    /// Every linked tool, sorted by id, whichever agents equip it.
    pub fn tools(&self) -> &[Tool] {
        self.registry.tools()
    }

    /// The tool called `name`, by canonical id (`acme:book_appointment`) or wire name
    /// (`acme__book_appointment`), whichever agents equip it.
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        let index = self.registry.tool_index(name)?;
        Some(&self.registry.tools()[index])
    }

    /// The linked hooks of `event`, in their declared order: what an agent runs when its
    /// configuration chooses none (see [`Agent::hooks`] for an agent's own).
    pub fn hooks(&self, event: Event) -> &[Hook] {
        self.registry.hooks.of(event)
    }

    /// Whether a linked hook may replace, regenerate or withhold replies (a
    /// `response_generated` hook that fails closed): the turns of an agent that runs one
    /// are served non-streamed, so that the mutation lands before anything reaches the
    /// user (see [`Agent::hooks_mutate_responses`]).
    pub fn hooks_mutate_responses(&self) -> bool {
        self.registry.hooks.mutate_responses()
    }

    /// The catalog of every linked tool in `format`, for a reader of `locale` (only
    /// MCP's depends on it); an agent's own catalog is [`Agent::catalog`]. Rendered once
    /// and shared: serving a catalog copies no JSON.
    pub fn catalog(&self, format: Format, locale: &str) -> Bytes {
        self.registry
            .catalogs
            .get(format, locale, || self.registry.tools().iter().collect())
    }

    /// Every linked channel, sorted by name, with the agent it runs when the
    /// configuration mounts it (`[channels.<name>]`).
    pub fn channels(&self) -> impl Iterator<Item = (&'static ChannelDescriptor, Option<&str>)> {
        self.registry.channels.iter().map(|channel| {
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

    /// The agent a turn of this engine is for, as configured when the turn was made. A
    /// turn made by another engine is a bug of the caller's: its agent equips another
    /// registry's tools.
    fn agent_of<'t>(&self, turn: &'t Turn) -> &'t Agent {
        assert!(
            turn.engine == self.id,
            "a Turn was used with an Engine other than the one that made it"
        );
        &turn.agent
    }

    /// The redactor of every secret configured now.
    pub(crate) fn redact(&self) -> Arc<RedactValues> {
        Arc::clone(&self.configured.load().redact)
    }
}
