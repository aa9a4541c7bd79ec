//! Building an [`Engine`]: what it serves, its configuration, and the stores it uses.

use std::collections::BTreeMap;
use std::sync::Arc;

use arc_swap::ArcSwap;
use plugin_sdk::engine::{ArtifactStore, HookDescriptor, KnowledgeStore, ToolDescriptor};

use super::backends::{
    open_broker, open_conversations, open_gateway, open_knowledge, open_shared, refuse_missing,
    Backends, Given,
};
use super::error::EngineError;
use super::reload::Configured;
use super::Engine;
use super::{linked_config, project_roots};
use crate::config::EngineConfig;
use crate::dev::DevSessions;
use crate::limits::Limits;
use crate::model::{ModelGateway, SpendLedger, TurnSpend};
use crate::provider::{self as drop_in, DropIns, Provider, ProviderFile};
use crate::redact::LogRedaction;
use crate::registry::{Linked, Registry};
use crate::stores::{ConversationStates, Conversations, MemoryArtifacts};
use crate::turn::{EngineId, Runtime};
use plugin_sdk::channel::ChannelDescriptor;

/// How an [`Engine`] is made: [`Engine::builder`], then what differs from the defaults,
/// then [`build`](Self::build).
///
/// By default the engine serves every tool and hook the binary linked, under the default
/// configuration, with its stores in memory: the [`backends`](Self::backends) it is given
/// open what the configuration asks for (SQLite under the data directory, a shared
/// database, providers). A configuration without agents gets one, `default`, that grants
/// nothing.
#[derive(Default)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct EngineBuilder {
    config: EngineConfig,
    limits: Limits,
    tools: Option<Vec<&'static ToolDescriptor>>,
    hooks: Option<Vec<&'static HookDescriptor>>,
    knowledge: Option<Arc<dyn KnowledgeStore>>,
    grants: Option<Arc<dyn crate::oauth::GrantStore>>,
    oauth_flow: Option<Arc<dyn crate::oauth::OAuthFlow>>,
    oauth_key: Option<crate::oauth::SealKey>,
    artifacts: Option<Arc<dyn ArtifactStore>>,
    spend_ledger: Option<Arc<dyn SpendLedger>>,
    gateway: Option<Arc<dyn ModelGateway>>,
    providers: BTreeMap<String, Arc<dyn Provider>>,
    conversations: Option<Conversations>,
    keep_conversations: bool,
    log_redaction: Option<LogRedaction>,
    backends: Backends,
    provider_files: Vec<ProviderFile>,
}

impl EngineBuilder {
    /// The engine's configuration (agents, their secrets and grants, limits of the stores).
    pub fn config(mut self, config: EngineConfig) -> Self {
        self.config = config;
        self
    }

    /// Limits on every call and turn.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Serves these tools instead of every linked one (a host that offers a chosen few,
    /// a test); the hooks stay every linked one unless [`hooks`](Self::hooks) chooses
    /// too. Their plugins come along.
    pub fn tools(mut self, tools: impl IntoIterator<Item = &'static ToolDescriptor>) -> Self {
        self.tools = Some(tools.into_iter().collect());
        self
    }

    /// Runs these hooks instead of every linked one; the tools stay every linked one
    /// unless [`tools`](Self::tools) chooses too. Their plugins come along.
    pub fn hooks(mut self, hooks: impl IntoIterator<Item = &'static HookDescriptor>) -> Self {
        self.hooks = Some(hooks.into_iter().collect());
        self
    }

    /// The OAuth grant store, instead of the one the backends open.
    pub fn grant_store(mut self, store: Arc<dyn crate::oauth::GrantStore>) -> Self {
        self.grants = Some(store);
        self
    }

    /// The OAuth flow's requests, instead of the backends'.
    pub fn oauth_flow(mut self, flow: Arc<dyn crate::oauth::OAuthFlow>) -> Self {
        self.oauth_flow = Some(flow);
        self
    }

    /// The key OAuth tokens are sealed with, instead of the environment's
    /// (`[oauth] key_env`).
    pub fn oauth_key(mut self, key: crate::oauth::SealKey) -> Self {
        self.oauth_key = Some(key);
        self
    }

    /// The knowledge store, instead of the one the backends open.
    pub fn knowledge_store(mut self, store: Arc<dyn KnowledgeStore>) -> Self {
        self.knowledge = Some(store);
        self
    }

    /// The artifact store, instead of the one the backends open (the shared database's,
    /// with one; else memory, under the configuration's `[artifacts]` limits).
    pub fn artifact_store(mut self, store: Arc<dyn ArtifactStore>) -> Self {
        self.artifacts = Some(store);
        self
    }

    /// The ledger agents' spend windows are counted in, instead of the shared database's
    /// (without either, each window is counted by this engine alone): engines that share
    /// one never pass a window's cap together.
    pub fn spend_ledger(mut self, ledger: Arc<dyn SpendLedger>) -> Self {
        self.spend_ledger = Some(ledger);
        self
    }

    /// The model gateway, instead of the one the configuration describes.
    pub fn model_gateway(mut self, gateway: Arc<dyn ModelGateway>) -> Self {
        self.gateway = Some(gateway);
        self
    }

    /// The drop-in providers a loader read from the providers directory
    /// (`engine_extensions::read_providers`): an agent's `turn.provider` may name one,
    /// and start-up checks it as it checks a configured one.
    pub fn provider_files(mut self, files: Vec<ProviderFile>) -> Self {
        self.provider_files = files;
        self
    }

    /// The provider called `name` in the configuration (`[providers.NAME]`, which may
    /// then be absent): a test's double, or a provider of your own.
    pub fn provider(mut self, name: impl Into<String>, provider: Arc<dyn Provider>) -> Self {
        self.providers.insert(name.into(), provider);
        self
    }

    /// The conversation store, instead of the one the backends open (when an agent runs
    /// turns: `conversations.sqlite` under the data directory with engine-sqlite's;
    /// memory without a backend).
    pub fn conversations(mut self, conversations: Conversations) -> Self {
        self.conversations = Some(conversations);
        self
    }

    /// The backends the configuration's parts are opened with (stores under the data
    /// directory, a shared database, providers, the model gateway): without one, a part
    /// the configuration asks for is refused, and conversations are kept in memory.
    pub fn backends(mut self, backends: Backends) -> Self {
        self.backends = backends;
        self
    }

    /// Keeps conversations where the configuration keeps those of turns (SQLite under
    /// the data directory, or the shared database) even when no agent runs turns: for
    /// calls in a conversation outside any turn, whose state is then kept across runs
    /// ([`Engine::call_in_conversation`], `engine call --conversation`). Without a
    /// backend that keeps them (or a store given), the build is refused.
    pub fn keep_conversations(mut self) -> Self {
        self.keep_conversations = true;
        self
    }

    /// The redactor of the log writer and the panic hook (which redact every configured
    /// secret): [`Engine::reload`] widens it with the secrets a new configuration brings,
    /// so that they never reach the log either.
    pub fn log_redaction(mut self, redaction: LogRedaction) -> Self {
        self.log_redaction = Some(redaction);
        self
    }

    /// What [`build`](Self::build) refuses short of opening or building anything: the
    /// linked plugins' problems (alone, when there are any), else every problem of the
    /// configuration alone and with what is linked. `engine config check` is this; what
    /// only starting shows (a plugin's state refusing its settings, a store that will not
    /// open) is left to `build`. Project roots that overlap what the engine reads are
    /// refused here too, creating nothing.
    pub fn check(mut self) -> Result<(), EngineError> {
        self.validated()?;
        project_roots::refuse_overlaps(&self.config, &[])?;
        self.refuse_missing_backends()
    }

    /// A part the configuration asks for that no backend, nor anything given, opens.
    fn refuse_missing_backends(&self) -> Result<(), EngineError> {
        refuse_missing(
            &self.config,
            &self.backends,
            Given {
                knowledge: self.knowledge.is_some(),
                grants: self.grants.is_some(),
                oauth_flow: self.oauth_flow.is_some(),
                gateway: self.gateway.is_some(),
                conversations: self.conversations.is_some(),
                keep_conversations: self.keep_conversations,
                providers: &self.providers,
            },
        )
    }

    /// The registry of what is linked, when it and the configuration (given an agent)
    /// hold no problem.
    fn validated(&mut self) -> Result<Registry, EngineError> {
        let linked = Linked::choose(self.tools.take(), self.hooks.take());
        let registry = Registry::build(linked, self.limits)?;
        self.config.ensure_an_agent();
        self.provider_files = super::checked_provider_files(
            std::mem::take(&mut self.provider_files),
            &self.config,
            &self.providers.keys().cloned().collect(),
        );
        let mut problems = self.config.problems();
        problems.extend(linked_config::problems(
            &self.config,
            &registry,
            &self.providers,
            &drop_in::offered(&self.provider_files),
        ));
        self.config.refuse(problems)?;
        Ok(registry)
    }

    /// Validates what the engine serves and opens its stores: an engine exists only if
    /// every check passed.
    pub fn build(mut self) -> Result<Engine, EngineError> {
        // Before any plugin code runs (a plugin's state is built below): a plugin's own
        // reqwest client needs rustls's provider as much as the engine's does.
        if let Some(prepare) = self.backends.prepare {
            prepare();
        }
        let registry = Arc::new(self.validated()?);
        // Before any store is opened: a refused start creates nothing.
        project_roots::refuse_overlaps(&self.config, &[])?;
        self.refuse_missing_backends()?;
        let config = self.config;
        let channels = mount_channels(&config, &registry);
        let shared = open_shared(&config, &self.backends)?;
        let knowledge = match self.knowledge {
            Some(store) => Some(store),
            None if config
                .agents
                .values()
                .any(|agent| agent.knowledge.is_some()) =>
            {
                match &shared {
                    Some(shared) => Some(Arc::clone(&shared.knowledge)),
                    None => Some(open_knowledge(&config, &self.backends)?),
                }
            }
            None => None,
        };
        let gateway = match (self.gateway, &config.gateway) {
            (Some(gateway), _) => Some(gateway),
            (None, Some(described)) => Some(open_gateway(described, &self.backends)?),
            (None, None) => None,
        };
        let conversations_for_turns = self.conversations.is_some()
            || self.keep_conversations
            || shared.is_some()
            || config.agents.values().any(|agent| agent.turn.is_some());
        let grants = self
            .grants
            .or_else(|| shared.as_ref().map(|shared| Arc::clone(&shared.grants)));
        let oauth = open_broker(
            &config,
            &self.backends,
            grants,
            self.oauth_flow,
            self.oauth_key,
        )?;
        let spend_ledger = self
            .spend_ledger
            .or_else(|| shared.as_ref().map(|shared| Arc::clone(&shared.spend)));
        let (conversations, artifacts) = match shared {
            Some(shared) => (
                self.conversations.unwrap_or(shared.conversations),
                self.artifacts.unwrap_or(shared.artifacts),
            ),
            None => {
                let conversations = match self.conversations {
                    Some(conversations) => conversations,
                    None => open_conversations(&config, self.keep_conversations, &self.backends)?,
                };
                let artifacts = self.artifacts.unwrap_or_else(|| {
                    Arc::new(MemoryArtifacts::new(config.artifacts)) as Arc<dyn ArtifactStore>
                });
                (conversations, artifacts)
            }
        };
        let states = ConversationStates::new(config.state);
        let dev = Arc::new(DevSessions::default());
        let configured = Configured::build(
            config,
            &registry,
            &self.providers,
            &self.backends,
            &dev,
            None,
        )?;
        // Checked against this configuration by `validated` already.
        configured.drop_ins.store(Arc::new(DropIns::equip(
            self.provider_files,
            &configured.config,
            self.backends.provider,
            &configured.redact,
        )));
        Ok(Engine {
            runtime: Runtime {
                id: EngineId::next(),
                registry,
                states,
                artifacts,
                knowledge,
                gateway,
                spend_ledger,
                conversations: ArcSwap::from_pointee(conversations),
                running: Default::default(),
                no_spend: Arc::new(TurnSpend::new(0.0, Vec::new(), None)),
                dev,
                oauth,
            },
            configured: ArcSwap::from_pointee(configured),
            replacing: std::sync::Mutex::default(),
            reloading: std::sync::Mutex::default(),
            given_providers: self.providers,
            backends: self.backends,
            log_redaction: self.log_redaction,
            offers_changed: Arc::new(tokio::sync::watch::Sender::new(0)),
            conversations_for_turns: conversations_for_turns.into(),
            channels,
        })
    }

    /// [`build`](Self::build) for an engine's `main`: on any problem, prints the report to
    /// stderr and exits with status 1, before anything is served.
    pub fn build_or_exit(self) -> Engine {
        self.build().unwrap_or_else(|error| {
            match error {
                // The report says that the engine refused, and ends its own lines.
                EngineError::Startup(_) => eprint!("{error}"),
                _ => eprintln!("the engine refused to start: {error}"),
            }
            std::process::exit(1)
        })
    }
}

/// Each configured channel with its linked adapter and its agent (every configured one
/// is linked: [`linked_config`] checked).
fn mount_channels(
    config: &EngineConfig,
    registry: &Registry,
) -> Vec<(&'static ChannelDescriptor, String)> {
    config
        .channels
        .iter()
        .filter_map(|(name, mounted)| {
            let linked = registry
                .channels
                .iter()
                .find(|channel| channel.name == name)?;
            Some((*linked, mounted.agent.clone()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ArtifactLimits;
    use crate::model::MemorySpendLedger;

    #[test]
    fn a_given_artifact_store_and_spend_ledger_are_the_ones_the_engine_uses() {
        let artifacts: Arc<dyn ArtifactStore> =
            Arc::new(MemoryArtifacts::new(ArtifactLimits::default()));
        let ledger: Arc<dyn SpendLedger> = Arc::new(MemorySpendLedger::new());
        let engine = Engine::builder()
            .artifact_store(Arc::clone(&artifacts))
            .spend_ledger(Arc::clone(&ledger))
            .build()
            .unwrap();
        assert!(Arc::ptr_eq(&engine.runtime.artifacts, &artifacts));
        let used = engine.runtime.spend_ledger.as_ref().expect("a ledger");
        assert!(Arc::ptr_eq(used, &ledger));
        // Without either: artifacts in memory of the engine's own, and no ledger.
        let plain = Engine::builder().build().unwrap();
        assert!(!Arc::ptr_eq(&plain.runtime.artifacts, &artifacts));
        assert!(plain.runtime.spend_ledger.is_none());
    }
}
