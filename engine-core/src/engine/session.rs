//! A client's session with an agent (an stdio connection; over HTTP, one request): a
//! budget its turns share.

use std::sync::{Arc, OnceLock};

use plugin_sdk::model::SpendCap;

use crate::agent::Agent;
use crate::model::Meter;
use crate::turn::EngineId;

/// A client's session with an agent, such as an stdio connection (over HTTP, one request:
/// the HTTP server keeps no sessions): the turns made with
/// [`Engine::turn_in`](crate::Engine::turn_in) spend together at most the agent's session
/// cap ([`ModelGrant::session_cap_usd`](crate::config::ModelGrant::session_cap_usd)), so a
/// client that calls in a loop cannot spend without limit.
///
/// A session outlives a reload of the configuration
/// ([`Engine::reload`](crate::Engine::reload)): its turns are of its agent as configured
/// then. Its budget is set by the first turn whose agent grants model access, and kept.
#[derive(Debug)]
pub struct Session {
    engine: EngineId,
    /// The agent's name.
    agent: String,
    spend: OnceLock<Arc<Meter>>,
}

impl Session {
    /// A session of `engine`'s agent `agent`, with the whole of its session cap.
    pub(super) fn new(engine: EngineId, agent: &str) -> Self {
        Self {
            engine,
            agent: agent.to_owned(),
            spend: OnceLock::new(),
        }
    }

    /// The name of the agent the session is of, checked to be one of `engine`'s sessions.
    pub(super) fn agent_in(&self, engine: EngineId) -> &str {
        assert!(
            self.engine == engine,
            "a Session was used with an Engine other than the one that made it"
        );
        &self.agent
    }

    /// The session's budget, if `agent` grants model access: the first such turn sets it
    /// to the agent's session cap then.
    pub(super) fn budget(&self, agent: &Agent) -> Option<Arc<Meter>> {
        agent.config().model.map(|grant| {
            let cap = grant.session_cap_usd();
            Arc::clone(
                self.spend
                    .get_or_init(|| Arc::new(Meter::new(SpendCap::Session, cap))),
            )
        })
    }
}
