//! [`Runtime`]: what a turn runs on. The engine holds one for its life; a reload replaces
//! the agents around it, and at most opens its conversation store once.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use plugin_sdk::engine::{ArtifactStore, KnowledgeStore};

use super::Turn;
use crate::agent::Agent;
use crate::config::ModelGrant;
use crate::dev::DevSessions;
use crate::model::{Meter, ModelGateway, SharedWindow, SpendLedger, TurnSpend};
use crate::registry::Registry;
use crate::stores::{ConversationStates, Conversations};

/// Which engine made a turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct EngineId(u64);

impl EngineId {
    pub(crate) fn next() -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        Self(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }
}

/// The registry a turn's tools and hooks come from and the stores they use: the narrow
/// part of the engine that turns, calls and hooks run over. Nothing in it reads a
/// configuration file, opens a backend or reloads; the agent a turn is of comes with the
/// [`Turn`].
pub(crate) struct Runtime {
    pub(crate) id: EngineId,
    pub(crate) registry: Arc<Registry>,
    /// The state each conversation's tools keep, in this process.
    pub(crate) states: ConversationStates,
    pub(crate) artifacts: Arc<dyn ArtifactStore>,
    pub(crate) knowledge: Option<Arc<dyn KnowledgeStore>>,
    pub(crate) gateway: Option<Arc<dyn ModelGateway>>,
    /// Where agents' spend windows are counted across replicas, with a shared database.
    pub(crate) spend_ledger: Option<Arc<dyn SpendLedger>>,
    /// Swapped by the first reload that adds an agent running turns, if none was chosen.
    pub(crate) conversations: ArcSwap<Conversations>,
    /// The conversations with a turn (or a kept call) under way in this process.
    pub(crate) running: Mutex<HashSet<String>>,
    /// The spend of every turn of an agent without model access, which no tool of it can
    /// add to: one for all, so that such a turn (an MCP call's) allocates none.
    pub(crate) no_spend: Arc<TurnSpend>,
    /// Every agent's dev sessions, which outlive a reload.
    pub(crate) dev: Arc<DevSessions>,
    /// The OAuth broker, when an agent has an OAuth client.
    pub(crate) oauth: Option<Arc<crate::oauth::Broker>>,
}

impl Runtime {
    /// A turn of `agent`, within `session`'s spend if it has one: the turn's model calls
    /// count against the turn's cap, the session's and the agent's window.
    pub(crate) fn new_turn(&self, agent: Arc<Agent>, session: Option<Arc<Meter>>) -> Turn {
        let spend = match agent.config().model {
            Some(grant) => Arc::new(self.new_spend(&agent, grant, session)),
            None => Arc::clone(&self.no_spend),
        };
        Turn {
            engine: self.id,
            agent,
            conversation: None,
            channel: None,
            locale: None,
            attachments: Vec::new(),
            spend,
        }
    }

    /// The spend of a turn of `agent`, which `grant` gives model access.
    fn new_spend(
        &self,
        agent: &Agent,
        grant: ModelGrant,
        session: Option<Arc<Meter>>,
    ) -> TurnSpend {
        let shared = session
            .into_iter()
            .chain(agent.spend_window().cloned())
            .collect();
        let window = self.spend_ledger.as_ref().map(|ledger| SharedWindow {
            ledger: Arc::clone(ledger),
            agent: agent.name().to_owned(),
            cap_usd: grant.window().cap_usd,
            secs: grant.window().secs,
        });
        TurnSpend::new(grant.spend_cap_usd, shared, window)
    }

    /// The agent a turn of this engine is for, as configured when the turn was made. A
    /// turn made by another engine is a bug of the caller's: its agent equips another
    /// registry's tools.
    pub(crate) fn agent_of<'t>(&self, turn: &'t Turn) -> &'t Agent {
        assert!(
            turn.engine == self.id,
            "a Turn was used with an Engine other than the one that made it"
        );
        &turn.agent
    }
}
