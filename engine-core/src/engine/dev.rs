//! Dev sessions, as the server opens and updates them: what each serves is checked
//! against the agent's configuration and what the engine links, then equipped.

use std::collections::BTreeSet;
use std::sync::Arc;

use plugin_dev_wire::{HookDecl, Refused, ToolDecl};
use tokio::sync::watch;

use super::Engine;
use crate::dev::{
    self, Checks, DevHook, DevLink, DevSessions, DevTool, Served, Session, MAX_HOOKS_PER_SESSION,
    MAX_TOOLS_PER_SESSION,
};
use crate::provider as drop_in;

/// An open dev session: its tools are equipped by its agent until it is dropped.
pub struct DevSession {
    agent: String,
    served: Arc<Served>,
    refused: Vec<Refused>,
    sessions: Arc<DevSessions>,
    offers_changed: Arc<watch::Sender<u64>>,
}

impl std::fmt::Debug for DevSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DevSession")
            .field("agent", &self.agent)
            .field("id", &self.id())
            .finish_non_exhaustive()
    }
}

impl DevSession {
    /// The session's id, as the turns' events name it.
    pub fn id(&self) -> &str {
        self.served.session.id()
    }

    /// The agent it serves.
    pub fn agent(&self) -> &str {
        &self.agent
    }

    /// The ids of the tools the agent equips from it.
    pub fn equipped(&self) -> Vec<String> {
        self.served
            .tools
            .load()
            .iter()
            .map(|tool| tool.id().to_owned())
            .collect()
    }

    /// The ids the agent runs its hooks as: an override's is the hook it replaces, a
    /// bound hook's its bare name.
    pub fn hooks(&self) -> Vec<String> {
        self.served
            .hooks
            .load()
            .iter()
            .map(|hook| hook.id().to_owned())
            .collect()
    }

    /// The tools and hooks it declared that the agent does not take, and why.
    pub fn refused(&self) -> &[Refused] {
        &self.refused
    }
}

impl Drop for DevSession {
    fn drop(&mut self) {
        self.sessions.close(&self.agent, self.id());
        self.offers_changed
            .send_modify(|generation| *generation += 1);
    }
}

impl Engine {
    /// Opens a dev session for the agent `agent`, serving `tools` through `link`: each
    /// is checked as a linked tool is at start-up, and against what the agent may hand
    /// it; those that pass are equipped until the session is dropped. Refused for an
    /// unknown agent, or one with as many sessions as it may have.
    pub fn open_dev_session(
        &self,
        agent: &str,
        tools: Vec<ToolDecl>,
        hooks: Vec<HookDecl>,
        link: Arc<dyn DevLink>,
    ) -> Result<DevSession, String> {
        if self.agent(agent).is_none() {
            return Err(format!("there is no agent `{agent}`"));
        }
        let mut refused = Vec::new();
        let served = self.runtime.dev.open(agent, new_id(), link, |session| {
            self.checked(agent, session, tools, hooks, &mut refused)
        })?;
        self.offers_changed
            .send_modify(|generation| *generation += 1);
        Ok(DevSession {
            agent: agent.to_owned(),
            served,
            refused,
            sessions: Arc::clone(&self.runtime.dev),
            offers_changed: Arc::clone(&self.offers_changed),
        })
    }

    /// Replaces what `session` serves with `tools` (a rebuild), checked as when it
    /// opened, without closing it: calls under way finish on the tools they started with.
    pub fn update_dev_session(
        &self,
        session: &mut DevSession,
        tools: Vec<ToolDecl>,
        hooks: Vec<HookDecl>,
    ) {
        let mut refused = Vec::new();
        // As `open` does: the checks and the swap together, one session at a time.
        let _changing = self.runtime.dev.changing();
        let (tools, hooks) = self.checked(
            &session.agent,
            &session.served.session,
            tools,
            hooks,
            &mut refused,
        );
        session.served.tools.store(Arc::new(tools));
        session.served.hooks.store(Arc::new(hooks));
        session.refused = refused;
        // A rebuild changes a description or a schema as often as the list: MCP clients
        // hear of each (updates come at most once a second).
        self.offers_changed
            .send_modify(|generation| *generation += 1);
    }

    /// The tools and hooks the agent `agent` may take from `session`; the others go to
    /// `refused`, with why.
    fn checked(
        &self,
        agent: &str,
        session: &Arc<Session>,
        tools: Vec<ToolDecl>,
        hooks: Vec<HookDecl>,
        refused: &mut Vec<Refused>,
    ) -> (Vec<Arc<DevTool>>, Vec<Arc<DevHook>>) {
        let Some(agent_now) = self.agent(agent) else {
            return (Vec::new(), Vec::new());
        };
        let configured = self.configured.load();
        let registry = &self.runtime.registry;
        let secret_owners = |key: &str| {
            let tools = registry
                .tools()
                .iter()
                .filter(|tool| tool.descriptor().secret_specs().any(|spec| spec.key == key))
                .map(|tool| tool.plugin().namespace);
            let hooks = registry
                .hooks
                .all()
                .filter(|hook| hook.descriptor().secret_specs().any(|spec| spec.key == key))
                .map(|hook| (hook.descriptor().plugin)().namespace);
            tools.chain(hooks).collect()
        };
        let drop_ins = configured.drop_ins.load();
        let provider_keys: BTreeSet<String> = configured
            .config
            .providers
            .values()
            .cloned()
            .chain(drop_in::offered(drop_ins.files()).into_values())
            .filter_map(|provider| provider.api_key_secret)
            .collect();
        let desk = self.runtime.dev.desk(agent);
        let external = agent_now.external_tools();
        let mut accepted: Vec<Arc<DevTool>> = Vec::new();
        let taken = |id: &str| {
            if let Some(tool) = external.iter().find(|tool| tool.id() == id) {
                return Some(format!("the extension file {}", tool.source().display()));
            }
            desk.tool(id)
                .filter(|tool| tool.session_id() != session.id())
                .map(|_| "another development session".to_owned())
        };
        let checks = Checks {
            agent,
            config: agent_now.config(),
            secret_owners: &secret_owners,
            provider_keys: &provider_keys,
            taken: &taken,
        };
        for (index, decl) in tools.into_iter().enumerate() {
            let id = format!("{}:{}", decl.namespace, decl.name);
            let checked = if index >= MAX_TOOLS_PER_SESSION {
                Err(format!(
                    "a development session serves at most {MAX_TOOLS_PER_SESSION} tools"
                ))
            } else if accepted.iter().any(|tool| tool.id() == id) {
                Err("the session declares it twice".to_owned())
            } else {
                dev::check(decl, session, &checks)
            };
            match checked {
                Ok(tool) => accepted.push(Arc::new(tool)),
                Err(why) => refused.push(Refused { tool: id, why }),
            }
        }
        let agent_hooks: Vec<_> = agent_now.hook_pipeline().all().collect();
        let others = desk.hooks();
        let mut runs: Vec<Arc<DevHook>> = Vec::new();
        for (index, decl) in hooks.into_iter().enumerate() {
            let id = decl.id();
            if index >= MAX_HOOKS_PER_SESSION {
                let why =
                    format!("a development session runs at most {MAX_HOOKS_PER_SESSION} hooks");
                refused.push(Refused { tool: id, why });
                continue;
            }
            let checked = dev::check_hook(decl, session, &checks, &agent_hooks).and_then(|hook| {
                let clash = runs
                    .iter()
                    .chain(others.iter().filter(|other| !other.is_of(session)))
                    .any(|other| other.id() == hook.id());
                if clash {
                    Err(format!(
                        "another hook of a development session runs as `{}`",
                        hook.id()
                    ))
                } else {
                    Ok(hook)
                }
            });
            match checked {
                Ok(hook) => runs.push(Arc::new(hook)),
                Err(why) => refused.push(Refused { tool: id, why }),
            }
        }
        // One line, however many: a session may declare hundreds.
        if !refused.is_empty() {
            let ids: Vec<&str> = refused
                .iter()
                .map(|refused| refused.tool.as_str())
                .collect();
            tracing::warn!(agent, refused = ?ids, "a development session's tools or hooks are refused (the session is told why)");
        }
        (accepted, runs)
    }
}

/// A new session's id: random, so that one session's calls are never taken for another's.
fn new_id() -> String {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).expect("the system's random source answers");
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}
