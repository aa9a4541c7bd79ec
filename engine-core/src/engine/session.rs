//! A client's session with an agent (an stdio connection; over HTTP, one request): a
//! budget its turns share.

use std::sync::Arc;

use plugin_sdk::model::SpendCap;

use super::{Engine, EngineId, Turn, UnknownAgent};
use crate::model::Meter;

/// A client's session with an agent, such as an stdio connection (over HTTP, one request:
/// the HTTP server keeps no sessions): the turns made with [`Engine::turn_in`] spend
/// together at most the agent's session cap
/// ([`ModelGrant::session_cap_usd`](crate::config::ModelGrant::session_cap_usd)), so a
/// client that calls in a loop cannot spend without limit.
#[derive(Debug)]
pub struct Session {
    engine: EngineId,
    agent: usize,
    spend: Option<Arc<Meter>>,
}

impl Engine {
    /// A new session of `agent`, with the whole of its session cap.
    pub fn session(&self, agent: &str) -> Result<Session, UnknownAgent> {
        let index = self.agent_index(agent)?;
        let grant = self.agents[index].config.model;
        Ok(Session {
            engine: self.id,
            agent: index,
            spend: grant
                .map(|grant| Arc::new(Meter::new(SpendCap::Session, grant.session_cap_usd()))),
        })
    }

    /// A turn of `session`'s agent outside any conversation, spending from the session's
    /// budget; see [`Turn::in_conversation`].
    pub fn turn_in(&self, session: &Session) -> Turn {
        assert!(
            session.engine == self.id,
            "a Session was used with an Engine other than the one that made it"
        );
        self.new_turn(session.agent, session.spend.clone())
    }
}
