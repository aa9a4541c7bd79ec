//! A session's tool: what the author's process declared, checked as a linked tool is at
//! start-up, and against what the agent may hand it.

use std::collections::BTreeSet;
use std::sync::Arc;

use plugin_dev_wire::{SecretDecl, ToolDecl};

use super::Session;
use crate::config::AgentConfig;
use crate::dispatch::Called;
use crate::external::{Declared, ExternalToolSpec};

/// A tool a dev session serves one agent.
pub struct DevTool {
    declared: Declared,
    decl: ToolDecl,
    session: Arc<Session>,
}

impl std::ops::Deref for DevTool {
    type Target = Declared;

    fn deref(&self) -> &Declared {
        &self.declared
    }
}

impl std::fmt::Debug for DevTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DevTool")
            .field("id", &self.id())
            .field("session", &self.session.id)
            .finish_non_exhaustive()
    }
}

impl DevTool {
    /// What its process declared.
    pub(crate) fn decl(&self) -> &ToolDecl {
        &self.decl
    }

    /// The session that serves it.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The id of the session that serves it.
    pub fn session_id(&self) -> &str {
        &self.session.id
    }

    /// Whether it is a staged action: its call stages it, and the turn performs it after
    /// the reply, through the same session.
    pub fn is_action(&self) -> bool {
        self.decl.action
    }
}

impl Called for DevTool {
    fn id(&self) -> &str {
        self.declared.id()
    }

    fn wire_name(&self) -> &str {
        self.declared.wire_name()
    }
}

/// What a session's tools are checked against, besides the agent's configuration.
pub(crate) struct Checks<'a> {
    /// The agent's name.
    pub(crate) agent: &'a str,
    /// Its configuration.
    pub(crate) config: &'a AgentConfig,
    /// For each secret key a linked plugin declares, that plugin's namespace.
    pub(crate) secret_owners: &'a dyn Fn(&str) -> Vec<&'static str>,
    /// The secrets that hold a model provider's key.
    pub(crate) provider_keys: &'a BTreeSet<String>,
    /// The ids the agent's extension files and its other sessions serve.
    pub(crate) taken: &'a dyn Fn(&str) -> Option<String>,
}

/// `decl`, as the agent `checks` names may equip it from `session`, or why not (one
/// sentence, with the fix).
pub(crate) fn check(
    decl: ToolDecl,
    session: &Arc<Session>,
    checks: &Checks<'_>,
) -> Result<DevTool, String> {
    let Checks { agent, config, .. } = checks;
    if decl.action {
        check_action_shape(&decl)?;
    }
    if decl.needs.project {
        return Err("it works on the agent's project files, which are on the engine's machine, not the developer's".to_owned());
    }
    if decl.needs.oauth {
        return Err("it takes the user's OAuth tokens, which the engine does not hand a dev session: try it linked, in an engine of your own".to_owned());
    }
    let spec = ExternalToolSpec {
        namespace: decl.namespace.clone(),
        name: decl.name.clone(),
        description: decl.description.clone(),
        summary: Some(decl.summary.clone()),
        category: decl.category.clone(),
        input_schema: decl.input_schema.clone(),
        knows_conversation: false,
    };
    let declared = Declared::check(spec).map_err(|error| error.to_string())?;
    if let (true, Some(why)) = (decl.strict, declared.not_strict()) {
        return Err(format!(
            "its schema is not strict-compatible ({why}), which start-up refuses in a linked tool"
        ));
    }
    if let Some(why) = declared.gemini_problem() {
        return Err(format!(
            "Gemini cannot take its schema ({why}), which start-up refuses in a linked tool"
        ));
    }
    if let Some(holder) = (checks.taken)(declared.id()) {
        return Err(format!("{holder} serves `{}` already", declared.id()));
    }
    check_secrets(&decl.namespace, &decl.secrets, checks)?;
    if let Some((level, true)) = decl.needs.knowledge {
        if config.knowledge.is_none_or(|granted| granted < level) {
            let granted = config.knowledge.map_or("nothing", |level| level.as_str());
            return Err(format!(
                "it needs the knowledge base at `{}`, and the agent grants {granted}",
                level.as_str()
            ));
        }
    }
    if decl.needs.plugin_state && !config.plugins.contains_key(&decl.namespace) {
        return Err(format!(
            "its plugin's settings are not configured (`[agents.{agent}.plugins.{}]`)",
            decl.namespace
        ));
    }
    Ok(DevTool {
        declared,
        decl,
        session: Arc::clone(session),
    })
}

/// What start-up requires of a linked action (`check_action_shape`), of a session's: an
/// action is given its arguments, the subscriber, the audit logger, its secrets and where it runs only.
fn check_action_shape(decl: &ToolDecl) -> Result<(), String> {
    let wrong: Vec<&str> = [
        (decl.needs.model, "it reads the model"),
        (
            decl.needs.knowledge.is_some(),
            "it reads the knowledge base",
        ),
        (decl.needs.plugin_state, "it reads its plugin's state"),
        (decl.needs.history, "it reads the conversation's history"),
        (!decl.strict, "its arguments are not strict"),
        (decl.exclusive, "it is exclusive"),
    ]
    .into_iter()
    .filter_map(|(broken, what)| broken.then_some(what))
    .collect();
    if wrong.is_empty() {
        return Ok(());
    }
    Err(format!(
        "a staged action is given its arguments, the subscriber, the audit logger, its secrets and where it runs only, but {}, which start-up refuses in a linked action",
        wrong.join(", ")
    ))
}

/// Whether a session's tool or hook of `namespace` may be given each of `secrets`.
pub(super) fn check_secrets(
    namespace: &str,
    secrets: &[SecretDecl],
    checks: &Checks<'_>,
) -> Result<(), String> {
    let agent = checks.agent;
    for secret in secrets {
        let key = secret.key.as_str();
        if checks.provider_keys.contains(key) {
            return Err(format!(
                "it declares the secret `{key}`, which holds a model provider's key: a session is never given it"
            ));
        }
        if let Some(owner) = (checks.secret_owners)(key)
            .into_iter()
            .find(|owner| *owner != namespace)
        {
            return Err(format!(
                "it declares the secret `{key}` of the linked plugin `{owner}`: a session's code of `{namespace}` is given only its own plugin's secrets"
            ));
        }
        if !dev_may_read(checks.config, key) {
            return Err(format!(
                "it declares the secret `{key}`, which the agent does not give dev sessions: list it in `[agents.{agent}.dev] secrets`, and give it in `[agents.{agent}.secrets]`"
            ));
        }
    }
    Ok(())
}

/// Whether the agent configured as `config` gives dev sessions' tools its secret `key`:
/// listed for them, and set.
pub(crate) fn dev_may_read(config: &AgentConfig, key: &str) -> bool {
    let listed = config
        .dev
        .as_ref()
        .is_some_and(|dev| dev.secrets.iter().any(|listed| listed == key));
    listed && config.secrets.contains_key(key)
}
