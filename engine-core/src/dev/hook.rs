//! A session's hook: what the author's process declared, checked against the agent's
//! hooks (an override needs one of its id at its event) or as a linked hook's settings
//! are at start-up (a bound one), and run through the session's link.

use std::sync::Arc;
use std::time::Duration;

use plugin_dev_wire::{event_named, Binding, CallFrame, HookDecl, NeedsDecl, Outcome, SecretDecl};
use plugin_sdk::engine::BoxFuture;
use plugin_sdk::hook::Event;
use plugin_sdk::ToolContext;

use super::tool::check_secrets;
use super::{Checks, DevServe, Session};
use crate::hooks::{Hook, Remote, RemoteHook};

/// The longest a bound hook may run: it runs in every turn of the agent, from a process
/// the operator does not run, so less than a linked hook's 60 s.
const MAX_TIMEOUT: Duration = Duration::from_secs(10);

/// A hook a dev session serves one agent.
pub struct DevHook {
    decl: HookDecl,
    /// Where it runs.
    binding: Remote,
    session: Arc<Session>,
}

impl DevHook {
    /// The id the agent runs it as: the replaced hook's, or its bare name.
    pub fn id(&self) -> &str {
        match &self.binding {
            Remote::Overrides(id) => id,
            Remote::Bound { name, .. } => name,
        }
    }

    /// Whether `session` serves it.
    pub(crate) fn is_of(&self, session: &Session) -> bool {
        self.session.id() == session.id()
    }

    /// Where it runs, for the agent's pipeline.
    pub(crate) fn binding(&self) -> Remote {
        match &self.binding {
            Remote::Overrides(id) => Remote::Overrides(id.clone()),
            Remote::Bound {
                event,
                name,
                position,
                timeout,
            } => Remote::Bound {
                event: *event,
                name: name.clone(),
                position: *position,
                timeout: *timeout,
            },
        }
    }
}

impl RemoteHook for DevHook {
    fn run(
        &self,
        frame: CallFrame,
        context: ToolContext,
    ) -> BoxFuture<'static, Result<Outcome, String>> {
        let Ok(permit) = Arc::clone(self.session.in_flight()).try_acquire_owned() else {
            return Box::pin(std::future::ready(Err(
                "the development session runs as many calls as it may".to_owned(),
            )));
        };
        let running = self.session.link().call(frame, DevServe::new(context));
        Box::pin(async move {
            let _permit = permit;
            running
                .await
                .map_err(|_| "the development session disconnected".to_owned())
        })
    }

    fn process_id(&self) -> String {
        self.decl.id()
    }

    fn namespace(&self) -> &str {
        &self.decl.namespace
    }

    fn needs(&self) -> NeedsDecl {
        self.decl.needs
    }

    fn secrets(&self) -> &[SecretDecl] {
        &self.decl.secrets
    }
}

/// `decl`, as the agent `checks` names may run it from `session`, among `agent_hooks`
/// (the hooks it runs), or why not.
pub(crate) fn check_hook(
    decl: HookDecl,
    session: &Arc<Session>,
    checks: &Checks<'_>,
    agent_hooks: &[&Hook],
) -> Result<DevHook, String> {
    let Some(event) = event_named(&decl.event) else {
        return Err(format!("`{}` is not an event", decl.event));
    };
    if decl.needs.project {
        return Err("it works on the agent's project files, which are on the engine's machine, not the developer's".to_owned());
    }
    if decl.needs.oauth {
        return Err(
            "it takes the user's OAuth tokens, which the engine does not hand a dev session"
                .to_owned(),
        );
    }
    if decl.needs.plugin_state || decl.needs.knowledge.is_some() {
        return Err("a hook takes no plugin state and no knowledge base".to_owned());
    }
    check_secrets(&decl.namespace, &decl.secrets, checks)?;
    let binding = match &decl.binding {
        Binding::Overrides { hook } => {
            let Some(replaced) = agent_hooks.iter().find(|linked| linked.id() == hook) else {
                return Err(format!(
                    "the agent runs no hook `{hook}` to override: bind it for the session instead (`DevOptions::bind`)"
                ));
            };
            if replaced.event() != event {
                return Err(format!(
                    "`{hook}` runs at `{}`, and this hook at `{}`",
                    replaced.event(),
                    decl.event
                ));
            }
            if decl.mutates_response && !replaced.descriptor().mutates_response {
                return Err(format!(
                    "it may change the reply, and `{hook}`, which it overrides, may not"
                ));
            }
            Remote::Overrides(hook.clone())
        }
        Binding::Bound { position } => {
            let bare = !decl.name.is_empty()
                && decl
                    .name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
            if !bare {
                return Err(format!(
                    "a bound hook's name is bare (lowercase letters, digits and `_`), and `{}` is not: the session names it, not the hook",
                    decl.name
                ));
            }
            if agent_hooks.iter().any(|linked| linked.id() == decl.name) {
                return Err(format!("the agent runs a hook `{}` already", decl.name));
            }
            let timeout = Duration::from_millis(decl.timeout_ms);
            if timeout.is_zero() || timeout > MAX_TIMEOUT {
                return Err(format!(
                    "its timeout is {} ms: give it 1 to {} ms",
                    decl.timeout_ms,
                    MAX_TIMEOUT.as_millis()
                ));
            }
            if decl.mutates_response && event != Event::ResponseGenerated {
                return Err("only a `response_generated` hook may change the reply".to_owned());
            }
            Remote::Bound {
                event,
                name: decl.name.clone(),
                position: *position,
                timeout,
            }
        }
    };
    Ok(DevHook {
        decl,
        binding,
        session: Arc::clone(session),
    })
}
