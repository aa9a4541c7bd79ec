//! Dev sessions: tools served by a plugin author's process over a bridge (dev mode),
//! equipped by one agent while the session is connected.
//!
//! The transport is the server's (a WebSocket, `engine-server`); the kernel keeps which
//! sessions each agent has, checks what they serve as it checks linked tools, and calls
//! them through a [`DevLink`] with the call's context, answering the questions the call
//! asks about it ([`DevServe`]).

mod hook;
mod serve;
mod tool;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use arc_swap::ArcSwap;
use plugin_dev_wire::{CallFrame, Outcome};
use plugin_sdk::engine::BoxFuture;
use tokio::sync::Semaphore;

pub(crate) use hook::check_hook;
pub use hook::DevHook;
pub use serve::DevServe;
pub use tool::DevTool;
pub(crate) use tool::{check, dev_may_read, Checks};

/// The most sessions one agent has open at once.
pub const MAX_SESSIONS_PER_AGENT: usize = 4;
/// The most calls one session runs at once; more are refused, not queued.
pub const MAX_CALLS_PER_SESSION: usize = 16;
/// The most tools one session serves.
pub const MAX_TOOLS_PER_SESSION: usize = 256;
/// The most hooks one session runs: each may hold every turn of the agent up to its
/// timeout.
pub const MAX_HOOKS_PER_SESSION: usize = 16;

/// Carries a session's calls to the author's process: implemented by the server over
/// its WebSocket.
pub trait DevLink: Send + Sync + 'static {
    /// Sends `frame` and waits for the call's end, answering the questions it asks with
    /// `serve`. Dropping the future tells the author's process the engine stopped
    /// waiting. `Err` when the session ended first.
    fn call(
        &self,
        frame: CallFrame,
        serve: DevServe,
    ) -> BoxFuture<'static, Result<Outcome, Disconnected>>;
}

/// The session ended before the call did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Disconnected {
    /// Before the call was queued for the socket: the author's process never saw it.
    Unsent,
    /// After it was queued: it may have reached the author's process, and its code may
    /// have run, in part or whole (or not: a frame queued as the socket died is lost).
    Unanswered,
}

/// One session, as its tools hold it: its id, its link, and its bound on calls.
pub struct Session {
    id: String,
    link: Arc<dyn DevLink>,
    /// Its calls in flight, tools' and hooks' alike.
    in_flight: Arc<Semaphore>,
}

impl Session {
    /// The session's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    pub(crate) fn link(&self) -> &Arc<dyn DevLink> {
        &self.link
    }

    pub(crate) fn in_flight(&self) -> &Arc<Semaphore> {
        &self.in_flight
    }
}

/// The sessions of one agent, as its turns read them: a list swapped whole.
#[derive(Default)]
pub(crate) struct Desk {
    sessions: ArcSwap<Vec<Arc<Served>>>,
    /// Whether `sessions` holds any: what every call asks first, for one load rather
    /// than the swap's.
    any: AtomicBool,
}

/// What one session serves the agent now.
pub(crate) struct Served {
    pub(crate) session: Arc<Session>,
    pub(crate) tools: ArcSwap<Vec<Arc<DevTool>>>,
    pub(crate) hooks: ArcSwap<Vec<Arc<DevHook>>>,
}

impl Desk {
    /// The tools every session of the agent serves now, oldest session first; empty
    /// (and allocating nothing) without a session.
    pub(crate) fn tools(&self) -> Vec<Arc<DevTool>> {
        if self.is_empty() {
            return Vec::new();
        }
        let sessions = self.sessions.load();
        sessions
            .iter()
            .flat_map(|served| served.tools.load().iter().cloned().collect::<Vec<_>>())
            .collect()
    }

    /// The hooks every session of the agent serves now, oldest session first.
    pub(crate) fn hooks(&self) -> Vec<Arc<DevHook>> {
        if self.is_empty() {
            return Vec::new();
        }
        let sessions = self.sessions.load();
        sessions
            .iter()
            .flat_map(|served| served.hooks.load().iter().cloned().collect::<Vec<_>>())
            .collect()
    }

    /// Whether the agent has no session now.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        !self.any.load(Ordering::Acquire)
    }

    fn store(&self, sessions: Vec<Arc<Served>>) {
        self.any.store(!sessions.is_empty(), Ordering::Release);
        self.sessions.store(Arc::new(sessions));
    }

    /// The tool called `name` (id or wire name) a session serves now.
    pub(crate) fn tool(&self, name: &str) -> Option<Arc<DevTool>> {
        let sessions = self.sessions.load();
        sessions.iter().find_map(|served| {
            served
                .tools
                .load()
                .iter()
                .find(|tool| tool.id() == name || tool.wire_name() == name)
                .cloned()
        })
    }
}

/// Every agent's sessions, by the agent's name: kept across reloads, which rebuild the
/// agents but not the sessions.
#[derive(Default)]
pub(crate) struct DevSessions {
    desks: Mutex<HashMap<String, Arc<Desk>>>,
    /// Held while a session is added or removed, so that two never race past the cap.
    changing: Mutex<()>,
}

impl DevSessions {
    /// The desk of the agent `agent`, made on first use.
    pub(crate) fn desk(&self, agent: &str) -> Arc<Desk> {
        let mut desks = self.desks.lock().expect("never poisoned");
        Arc::clone(desks.entry(agent.to_owned()).or_default())
    }

    /// Adds a session with what `served` checks to `agent`'s desk, or says why not (the
    /// cap).
    pub(crate) fn open(
        &self,
        agent: &str,
        id: String,
        link: Arc<dyn DevLink>,
        served: impl FnOnce(&Arc<Session>) -> (Vec<Arc<DevTool>>, Vec<Arc<DevHook>>),
    ) -> Result<Arc<Served>, String> {
        let _changing = self.changing();
        let desk = self.desk(agent);
        let current = desk.sessions.load_full();
        if current.len() >= MAX_SESSIONS_PER_AGENT {
            return Err(format!(
                "the agent `{agent}` has {MAX_SESSIONS_PER_AGENT} development sessions open, the most it takes: close one first"
            ));
        }
        let session = Arc::new(Session {
            id,
            link,
            in_flight: Arc::new(Semaphore::new(MAX_CALLS_PER_SESSION)),
        });
        let (tools, hooks) = served(&session);
        let served = Arc::new(Served {
            tools: ArcSwap::from_pointee(tools),
            hooks: ArcSwap::from_pointee(hooks),
            session,
        });
        let mut next = Vec::clone(&current);
        next.push(Arc::clone(&served));
        desk.store(next);
        Ok(served)
    }

    /// Removes the session `id` from `agent`'s desk.
    pub(crate) fn close(&self, agent: &str, id: &str) {
        let _changing = self.changing();
        let desk = self.desk(agent);
        let current = desk.sessions.load_full();
        let next: Vec<Arc<Served>> = current
            .iter()
            .filter(|served| served.session.id != id)
            .cloned()
            .collect();
        desk.store(next);
    }

    /// Held while what a session serves is replaced, so that two sessions never both
    /// claim a tool or hook.
    pub(crate) fn changing(&self) -> MutexGuard<'_, ()> {
        self.changing.lock().expect("never poisoned")
    }
}
