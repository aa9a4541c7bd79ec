//! A client's session with an agent (an stdio connection; over HTTP, one request): a
//! budget its turns share.

use std::sync::{Arc, OnceLock};

use plugin_sdk::model::SpendCap;

use super::{Agent, Engine, EngineId, Turn, UnknownAgent};
use crate::model::Meter;

/// A client's session with an agent, such as an stdio connection (over HTTP, one request:
/// the HTTP server keeps no sessions): the turns made with [`Engine::turn_in`] spend
/// together at most the agent's session cap
/// ([`ModelGrant::session_cap_usd`](crate::config::ModelGrant::session_cap_usd)), so a
/// client that calls in a loop cannot spend without limit.
///
/// A session outlives a reload of the configuration ([`Engine::reload`]): its turns are
/// of its agent as configured then. Its budget is set by the first turn whose agent
/// grants model access, and kept.
#[derive(Debug)]
pub struct Session {
    engine: EngineId,
    /// The agent's name.
    agent: String,
    spend: OnceLock<Arc<Meter>>,
}

impl Engine {
    /// A new session of `agent`, with the whole of its session cap.
    pub fn session(&self, agent: &str) -> Result<Session, UnknownAgent> {
        let agent = self.known_agent(agent)?;
        Ok(Session {
            engine: self.id,
            agent: agent.name().to_owned(),
            spend: OnceLock::new(),
        })
    }

    /// A new session of the agent `session` is of, with the whole of its session cap;
    /// refused if a reload removed the agent.
    pub fn session_like(&self, session: &Session) -> Result<Session, UnknownAgent> {
        self.session(&session.agent)
    }

    /// A turn of `session`'s agent (as configured now) outside any conversation, spending
    /// from the session's budget; see [`Turn::in_conversation`]. Refused if a reload
    /// removed the agent: a session cannot keep an agent the operator took away.
    pub fn turn_in(&self, session: &Session) -> Result<Turn, UnknownAgent> {
        let agent = self.session_agent(session)?;
        let spend = agent.config().model.map(|grant| {
            let cap = grant.session_cap_usd();
            Arc::clone(
                session
                    .spend
                    .get_or_init(|| Arc::new(Meter::new(SpendCap::Session, cap))),
            )
        });
        Ok(self.new_turn(agent, spend))
    }

    /// The agent of `session` as configured now: a session sees its agent's new tools
    /// and grants after a reload (its budget stays); refused if the reload removed it.
    pub fn session_agent(&self, session: &Session) -> Result<Arc<Agent>, UnknownAgent> {
        assert!(
            session.engine == self.id,
            "a Session was used with an Engine other than the one that made it"
        );
        self.known_agent(&session.agent)
    }
}
