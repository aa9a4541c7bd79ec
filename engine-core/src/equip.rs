//! What an agent equips: why it leaves a linked tool or a hook out, in words for people
//! (`engine check`, `engine tools`), never for the model.

use crate::config::AgentConfig;
use crate::tool::Tool;

/// A tool an agent does not equip, and why: shown to people (`check`, `tools`), never
/// to the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeftOut {
    /// The tool's id.
    pub tool: String,
    /// What the agent lacks.
    pub reasons: Vec<String>,
}

/// Why the agent `name` configured as `config` leaves `tool` out: it is not in the
/// agent's `tools` list; or its secrets are not configured, the knowledge grant is below
/// its need, the agent has no project root for it.
pub(crate) fn missing(name: &str, config: &AgentConfig, tool: &Tool) -> Vec<String> {
    if let Some(enabled) = &config.tools {
        if !enabled.iter().any(|id| id == tool.id()) {
            return vec![format!("it is not in `agents.{name}.tools`")];
        }
    }
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
    if descriptor.needs.state.is_some() && !config.plugins.contains_key(tool.plugin().namespace) {
        let namespace = tool.plugin().namespace;
        reasons.push(format!(
            "its plugin's settings are not configured (`[agents.{name}.plugins.{namespace}]`)"
        ));
    }
    if descriptor.needs.oauth {
        let plugin = tool.plugin();
        let configured = plugin.oauth.iter().any(|provider| {
            config
                .oauth
                .contains_key(&format!("{}:{}", plugin.namespace, provider.id))
        });
        if !configured {
            let declared: Vec<String> = plugin
                .oauth
                .iter()
                .map(|provider| format!("`{}:{}`", plugin.namespace, provider.id))
                .collect();
            reasons.push(if declared.is_empty() {
                format!("it takes OAuth tokens, and its plugin `{}` declares no OAuth provider", plugin.namespace)
            } else {
                format!(
                    "it takes OAuth tokens, and the agent has no client for {} (`[agents.{name}.oauth.\"<provider>\"]`)",
                    declared.join(" or ")
                )
            });
        }
    }
    if descriptor.needs.project && config.project.is_none() {
        reasons.push(format!(
            "it works on project files, and the agent has no project root (`[agents.{name}.project] root = \"...\"`)"
        ));
    }
    reasons
}
