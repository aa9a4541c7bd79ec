//! The engine around the registry: agents, what each equips and grants, and the context
//! a tool call receives, built from the agent and the turn, never from the model.

pub(crate) mod artifacts;
pub(crate) mod knowledge;
pub(crate) mod model;
pub(crate) mod openai_gateway;
pub(crate) mod states;

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;
use plugin_sdk::{
    Artifacts, Audit, KnowledgeGrant, KnowledgeStore, Model, RedactValues, Secret, State,
    ToolContext, TurnIdentity,
};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::catalog::Catalogs;
use crate::config::{AgentConfig, EngineConfig};
use crate::dispatch::{unknown_tool, Call, CallError};
use crate::registry::{Registry, Tool};
use crate::Format;
use artifacts::MemoryArtifacts;
use model::{MeteredModel, ModelGateway, TurnSpend};
use states::ConversationStates;

/// The registry, the agents configured over it, and the stores their tools use.
pub struct Engine {
    registry: Arc<Registry>,
    /// Sorted by name (the configuration's map order); a turn refers to one by index.
    agents: Vec<Agent>,
    redact: Arc<RedactValues>,
    states: ConversationStates,
    artifacts: Arc<MemoryArtifacts>,
    knowledge: Option<Arc<dyn KnowledgeStore>>,
    gateway: Option<Arc<dyn ModelGateway>>,
}

/// What an engine's tools reach besides the registry: the knowledge store and the model
/// gateway. [`Engine::from_config`] opens the embedded defaults.
#[derive(Default)]
pub struct Stores {
    /// The knowledge store, for agents that grant knowledge.
    pub knowledge: Option<Arc<dyn KnowledgeStore>>,
    /// The model gateway, for agents that grant model access.
    pub gateway: Option<Arc<dyn ModelGateway>>,
}

/// Every configured secret value, for the audit logger and the log writer.
pub fn redactor(config: &EngineConfig) -> Arc<RedactValues> {
    Arc::new(RedactValues::new(config.secret_values().map(str::to_owned)))
}

impl Engine {
    /// The engine `config` describes over `registry`: SQLite under the data directory
    /// when an agent grants knowledge, the configured gateway when one grants models.
    pub fn from_config(registry: Arc<Registry>, config: &EngineConfig) -> Result<Self, String> {
        let mut stores = Stores::default();
        if config
            .agents
            .values()
            .any(|agent| agent.knowledge.is_some())
        {
            let path = config.data_dir().join("knowledge.sqlite");
            let store = knowledge::SqliteKnowledge::open(&path, config.knowledge)
                .map_err(|error| format!("{}: {error}", path.display()))?;
            stores.knowledge = Some(Arc::new(store));
        }
        if let Some(gateway) = &config.gateway {
            stores.gateway = Some(Arc::new(openai_gateway::OpenAiCompatibleGateway::new(
                gateway,
            )?));
        }
        Ok(Self::new(registry, config, stores))
    }

    /// The engine `config` describes over `registry`, with `stores`.
    pub fn new(registry: Arc<Registry>, config: &EngineConfig, stores: Stores) -> Self {
        let agents = config
            .agents
            .iter()
            .map(|(name, agent)| Agent::new(name, agent.clone(), &registry))
            .collect();
        Self {
            agents,
            redact: redactor(config),
            states: ConversationStates::default(),
            artifacts: Arc::new(MemoryArtifacts::new(config.artifacts)),
            knowledge: stores.knowledge,
            gateway: stores.gateway,
            registry,
        }
    }

    /// The registry.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The agents, by name.
    pub fn agents(&self) -> impl Iterator<Item = &Agent> {
        self.agents.iter()
    }

    /// The agent called `name`.
    pub fn agent(&self, name: &str) -> Option<&Agent> {
        self.index_of(name).map(|index| &self.agents[index])
    }

    fn index_of(&self, name: &str) -> Option<usize> {
        self.agents
            .binary_search_by(|agent| agent.name.as_str().cmp(name))
            .ok()
    }

    /// A turn of `agent` for `subscriber` in `conversation`: its calls share the turn's
    /// model spend, and see the conversation's state and artifacts.
    pub fn turn(
        &self,
        agent: &str,
        subscriber: impl Into<String>,
        conversation: impl Into<String>,
    ) -> Result<AgentTurn, UnknownAgent> {
        let mut turn = self.session(agent)?;
        turn.identity = Some(TurnIdentity {
            subscriber: subscriber.into(),
            conversation: conversation.into(),
        });
        Ok(turn)
    }

    /// Calls of `agent` outside any conversation (an MCP client, the command line): no
    /// subscriber, state or artifacts.
    pub fn session(&self, agent: &str) -> Result<AgentTurn, UnknownAgent> {
        let index = self.index_of(agent).ok_or_else(|| UnknownAgent {
            name: agent.to_owned(),
            known: self.agents.iter().map(|known| known.name.clone()).collect(),
        })?;
        let found = &self.agents[index];
        let cap = found.config.model.map_or(0.0, |grant| grant.spend_cap_usd);
        Ok(AgentTurn {
            agent: index,
            agent_name: agent.to_owned(),
            identity: None,
            locale: None,
            spend: Arc::new(TurnSpend::new(cap)),
        })
    }

    /// Calls a tool the turn's agent equips, with the context the agent and the turn
    /// give it; a tool the agent does not equip is unknown, as if it were not linked.
    /// State writes are applied only if the call succeeds.
    pub async fn call(&self, turn: &AgentTurn, call: ToolCall<'_>) -> Result<String, CallError> {
        let agent = &self.agents[turn.agent];
        let tool = match self.registry.tool_index(call.tool) {
            Some(index) if agent.equips[index] => &self.registry.tools()[index],
            _ => return Err(unknown_tool(call.tool)),
        };
        let deadline = call
            .deadline
            .unwrap_or_else(|| Instant::now() + self.registry.limits.default_timeout);
        let context = self.context(agent, turn, tool, deadline, call.cancel.cloned());
        let mut dispatch = Call::new(call.tool, call.arguments, &context).deadline(deadline);
        if let Some(token) = call.cancel {
            dispatch = dispatch.cancel_on(token);
        }
        let result = self.registry.call(dispatch).await;
        if let (Ok(_), Some(identity)) = (&result, &turn.identity) {
            self.states
                .apply(&identity.conversation, context.take_state_writes());
        }
        result
    }

    /// The context of one call: the tool's declared secrets and no other, the agent's
    /// grants, the turn's identity, state snapshot and artifacts.
    fn context(
        &self,
        agent: &Agent,
        turn: &AgentTurn,
        tool: &Tool,
        deadline: Instant,
        cancel: Option<CancellationToken>,
    ) -> ToolContext {
        let descriptor = tool.descriptor();
        let mut context = ToolContext::new();
        if let Some(locale) = &turn.locale {
            context = context.with_locale(locale.clone());
        }
        if let Some(identity) = &turn.identity {
            context = context
                .with_turn(identity.subscriber.clone(), identity.conversation.clone())
                .with_state(State::new(self.states.snapshot(&identity.conversation)))
                .with_artifacts(Artifacts::new(
                    Arc::clone(&self.artifacts) as _,
                    identity.conversation.clone(),
                ));
        }
        for spec in descriptor.secret_specs() {
            if let Some(value) = agent.config.secrets.get(spec.key) {
                context = context.with_secret(spec.key, Secret::new(value.clone()));
            }
        }
        context = context.with_audit(Audit::new(
            Arc::clone(&self.redact) as _,
            tool.audit_source(),
        ));
        if let (Some(_), Some(level), Some(store)) = (
            descriptor.knowledge,
            agent.config.knowledge,
            &self.knowledge,
        ) {
            let grant = KnowledgeGrant::new(
                Arc::clone(store),
                agent.name.clone(),
                tool.plugin().namespace,
                level,
            );
            context = context.with_knowledge(grant);
        }
        if let (Some(_), Some(gateway)) = (agent.config.model, &self.gateway) {
            context = context.with_model(Model::new(Arc::new(MeteredModel {
                gateway: Arc::clone(gateway),
                spend: Arc::clone(&turn.spend),
                tool: tool.id().to_owned(),
                deadline,
                cancel: cancel.unwrap_or_default(),
            })));
        }
        context
    }
}

/// No agent has that name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownAgent {
    /// The name asked for.
    pub name: String,
    /// The agents there are.
    pub known: Vec<String>,
}

impl fmt::Display for UnknownAgent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "there is no agent `{}`; the configured agents are: {}",
            self.name,
            self.known.join(", ")
        )
    }
}

impl std::error::Error for UnknownAgent {}

/// One turn (or session) of an agent: whose it is, and what its model calls spent.
pub struct AgentTurn {
    /// The agent's index in the engine.
    agent: usize,
    agent_name: String,
    identity: Option<TurnIdentity>,
    locale: Option<String>,
    spend: Arc<TurnSpend>,
}

impl AgentTurn {
    /// The same turn, for a reader of `locale`.
    pub fn with_locale(mut self, locale: impl Into<String>) -> Self {
        self.locale = Some(locale.into());
        self
    }

    /// The agent's name.
    pub fn agent(&self) -> &str {
        &self.agent_name
    }

    /// The model calls of the turn and what they cost.
    pub fn spend(&self) -> &TurnSpend {
        &self.spend
    }
}

/// One tool call within a turn.
#[derive(Clone, Copy)]
pub struct ToolCall<'a> {
    tool: &'a str,
    arguments: &'a str,
    deadline: Option<Instant>,
    cancel: Option<&'a CancellationToken>,
}

impl<'a> ToolCall<'a> {
    /// A call of `tool` (id or wire name) with `arguments` (JSON text), under the
    /// registry's default timeout.
    pub fn new(tool: &'a str, arguments: &'a str) -> Self {
        Self {
            tool,
            arguments,
            deadline: None,
            cancel: None,
        }
    }

    /// The same call, stopped at `deadline`; model calls it makes stop there too.
    pub fn deadline(mut self, deadline: Instant) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// The same call, stopped when `token` is cancelled; model calls it makes too.
    pub fn cancel_on(mut self, token: &'a CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }
}

/// An agent: its configuration, the tools it equips, and the catalogs of those tools.
pub struct Agent {
    name: String,
    config: AgentConfig,
    registry: Arc<Registry>,
    /// Indexes into the registry's tools, in its order.
    equipped: Vec<usize>,
    /// Whether it equips each of the registry's tools, by index: one look-up per call.
    equips: Vec<bool>,
    left_out: Vec<LeftOut>,
    catalogs: Catalogs,
}

/// A tool an agent does not equip, and why: shown to people (`check`, `tools`), never
/// to the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeftOut {
    /// The tool's id.
    pub tool: String,
    /// What the agent lacks.
    pub reasons: Vec<String>,
}

impl Agent {
    fn new(name: &str, config: AgentConfig, registry: &Arc<Registry>) -> Self {
        let mut equipped = Vec::new();
        let mut left_out = Vec::new();
        for (index, tool) in registry.tools().iter().enumerate() {
            let reasons = missing(&config, tool);
            if reasons.is_empty() {
                equipped.push(index);
            } else {
                left_out.push(LeftOut {
                    tool: tool.id().to_owned(),
                    reasons,
                });
            }
        }
        let tools: Vec<&Tool> = equipped
            .iter()
            .map(|&index| &registry.tools()[index])
            .collect();
        // The registry already reported what Gemini refuses; none is left here.
        let catalogs = Catalogs::render(&tools, &mut Vec::new());
        let mut equips = vec![false; registry.tools().len()];
        for &index in &equipped {
            equips[index] = true;
        }
        Self {
            name: name.to_owned(),
            equips,
            config,
            registry: Arc::clone(registry),
            equipped,
            left_out,
            catalogs,
        }
    }

    /// The agent's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its configuration.
    pub fn config(&self) -> &AgentConfig {
        &self.config
    }

    /// The tools it equips, in the registry's order.
    pub fn tools(&self) -> impl Iterator<Item = &Tool> {
        self.equipped
            .iter()
            .map(|&index| &self.registry.tools()[index])
    }

    /// The tools it leaves out, and why.
    pub fn left_out(&self) -> &[LeftOut] {
        &self.left_out
    }

    /// The catalog of the tools it equips, in `format` for a reader of `locale`.
    pub fn catalog(&self, format: Format, locale: &str) -> Bytes {
        self.catalogs.get(format, locale, || self.tools().collect())
    }
}

/// What `config` lacks for `tool`: unconfigured secrets, a knowledge grant below need.
fn missing(config: &AgentConfig, tool: &Tool) -> Vec<String> {
    let descriptor = tool.descriptor();
    let mut reasons: Vec<String> = descriptor
        .secret_specs()
        .filter(|spec| !config.secrets.contains_key(spec.key))
        .map(|spec| format!("the secret `{}` is not configured", spec.key))
        .collect();
    if let Some(need) = descriptor.knowledge.filter(|need| need.required) {
        if config.knowledge.is_none_or(|granted| granted < need.level) {
            let granted = config.knowledge.map_or("nothing", |level| level.as_str());
            reasons.push(format!(
                "it needs the knowledge base at `{}`, and the agent grants {granted}",
                need.level.as_str()
            ));
        }
    }
    reasons
}
