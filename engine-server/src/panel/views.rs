//! What the panel shows, as data: built from the engine once per request, answered as
//! JSON by the admin API and rendered as HTML by the pages, so that the two never
//! disagree.

use engine_core::{Agent, Engine, LeftOut};
use plugin_sdk::engine::SecretSpec;
use plugin_sdk::hook::Event;
use plugin_sdk::secrets::SecretKind;
use serde::Serialize;
use std::collections::{HashMap, HashSet};

use super::locale::{humanized, Locale};
use engine_core::config::SecretOrigin;

/// An agent, as the panel's menu lists it.
#[derive(Serialize)]
pub(crate) struct AgentSummary {
    pub(crate) name: String,
    /// Whether it runs turns (has a `turn` configuration): the chat needs it.
    pub(crate) runs_turns: bool,
    /// Whether its knowledge base is reachable (a grant, and a store).
    pub(crate) knowledge: bool,
    pub(crate) equipped: usize,
    pub(crate) left_out: usize,
}

pub(crate) fn agents(engine: &Engine) -> Vec<AgentSummary> {
    engine
        .agents()
        .iter()
        .map(|agent| AgentSummary {
            name: agent.name().to_owned(),
            runs_turns: agent.config().turn.is_some(),
            knowledge: agent.config().knowledge.is_some() && engine.knowledge_store().is_some(),
            equipped: agent.tools().count(),
            left_out: agent.left_out().len(),
        })
        .collect()
}

/// An agent's tools, by plugin and category, and its hooks.
#[derive(Serialize)]
pub(crate) struct AgentTools {
    pub(crate) agent: String,
    /// The locale the texts are in (the reader's, as asked).
    pub(crate) locale: String,
    /// Whether the agent lists its tools (`tools = [...]`); without a list it enables
    /// every linked tool.
    pub(crate) lists_tools: bool,
    /// Whether the switches can write the configuration (the engine was started from a
    /// file).
    pub(crate) editable: bool,
    pub(crate) plugins: Vec<PluginTools>,
    pub(crate) hooks: Vec<HookView>,
}

#[derive(Serialize)]
pub(crate) struct PluginTools {
    pub(crate) namespace: &'static str,
    /// The plugin's display name in the reader's locale, else its namespace humanized.
    pub(crate) display_name: String,
    pub(crate) description: Option<&'static str>,
    pub(crate) package: &'static str,
    pub(crate) version: &'static str,
    pub(crate) categories: Vec<Category>,
}

/// The tools of a plugin that share a category id (`None`: uncategorized).
#[derive(Serialize)]
pub(crate) struct Category {
    pub(crate) id: Option<&'static str>,
    /// The id translated when the panel knows it, else humanized.
    pub(crate) name: String,
    pub(crate) tools: Vec<ToolView>,
}

#[derive(Serialize)]
pub(crate) struct ToolView {
    pub(crate) id: String,
    pub(crate) summary: &'static str,
    /// `read_only`, `destructive`, `idempotent`, `open_world`: the annotations it sets
    /// true.
    pub(crate) annotations: Vec<&'static str>,
    /// `tool`, `conversation` (in a conversation only) or `staged_action`.
    pub(crate) kind: &'static str,
    /// Whether the agent's configuration enables it (its `tools` list names it, or there
    /// is no list).
    pub(crate) enabled: bool,
    /// Whether the agent equips it: enabled, and nothing it needs is missing.
    pub(crate) equipped: bool,
    /// Why it is not equipped, as `engine tools` says.
    pub(crate) left_out: Vec<String>,
    pub(crate) secrets: Vec<SecretView>,
}

/// A declared secret as a person reads it, in the reader's locale.
#[derive(Serialize)]
pub(crate) struct SecretSpecView {
    pub(crate) key: &'static str,
    pub(crate) label: &'static str,
    pub(crate) description: &'static str,
    /// `password` (masked), `text` or `select`.
    pub(crate) kind: &'static str,
    /// A `select`'s choices, as written.
    pub(crate) choices: &'static [&'static str],
}

impl SecretSpecView {
    fn new(spec: &'static SecretSpec, tag: &str) -> Self {
        Self {
            key: spec.key,
            label: spec.label.resolve(tag),
            description: spec.description.resolve(tag),
            kind: spec.kind.as_str(),
            choices: match spec.kind {
                SecretKind::Select(choices) => choices,
                _ => &[],
            },
        }
    }
}

/// A secret a tool declares: a field of the agent's configuration.
#[derive(Serialize)]
pub(crate) struct SecretView {
    #[serde(flatten)]
    pub(crate) spec: SecretSpecView,
    /// Whether the agent has it (its value is never shown).
    pub(crate) set: bool,
}

#[derive(Serialize)]
pub(crate) struct HookView {
    pub(crate) id: String,
    pub(crate) event: String,
    pub(crate) position: u32,
    pub(crate) timeout_ms: u128,
    pub(crate) summary: &'static str,
    pub(crate) mutates_response: bool,
}

pub(crate) fn agent_tools(
    engine: &Engine,
    agent: &Agent,
    locale: &Locale,
    editable: bool,
) -> AgentTools {
    let tag = locale.tag();
    let config = agent.config();
    // Looked up once per tool: an agent switched in the panel lists nearly every tool.
    let listed: Option<HashSet<&str>> = config
        .tools
        .as_ref()
        .map(|listed| listed.iter().map(String::as_str).collect());
    let left_out: HashMap<&str, &LeftOut> = agent
        .left_out()
        .iter()
        .map(|left| (left.tool.as_str(), left))
        .collect();
    let plugins = engine
        .plugins()
        .map(|(plugin, tools)| {
            let mut categories: Vec<Category> = Vec::new();
            for tool in tools {
                let descriptor = tool.descriptor();
                let left_out = left_out
                    .get(tool.id())
                    .map(|left| left.reasons.clone())
                    .unwrap_or_default();
                let annotations = &descriptor.annotations;
                let view = ToolView {
                    id: tool.id().to_owned(),
                    summary: descriptor.summary_for(tag),
                    annotations: [
                        ("read_only", annotations.read_only),
                        ("destructive", annotations.destructive),
                        ("idempotent", annotations.idempotent),
                        ("open_world", annotations.open_world),
                    ]
                    .into_iter()
                    .filter(|(_, set)| *set == Some(true))
                    .map(|(name, _)| name)
                    .collect(),
                    kind: if tool.is_action() {
                        "staged_action"
                    } else if tool.needs_conversation() {
                        "conversation"
                    } else {
                        "tool"
                    },
                    enabled: listed
                        .as_ref()
                        .is_none_or(|listed| listed.contains(tool.id())),
                    equipped: left_out.is_empty(),
                    left_out,
                    secrets: descriptor
                        .secret_specs()
                        .map(|spec| SecretView {
                            spec: SecretSpecView::new(spec, tag),
                            set: config.secrets.contains_key(spec.key),
                        })
                        .collect(),
                };
                let category = descriptor.category;
                match categories.iter_mut().find(|group| group.id == category) {
                    Some(group) => group.tools.push(view),
                    None => categories.push(Category {
                        id: category,
                        name: locale.category(category),
                        tools: vec![view],
                    }),
                }
            }
            PluginTools {
                namespace: plugin.namespace,
                display_name: plugin.display_name.map_or_else(
                    || humanized(plugin.namespace),
                    |name| name.resolve(tag).to_owned(),
                ),
                description: plugin.description.map(|text| text.resolve(tag)),
                package: plugin.package,
                version: plugin.version,
                categories,
            }
        })
        .collect();
    let hooks = Event::ALL
        .iter()
        .flat_map(|&event| agent.hooks(event).iter().map(move |hook| (event, hook)))
        .map(|(event, hook)| {
            let descriptor = hook.descriptor();
            HookView {
                id: hook.id().to_owned(),
                event: event.to_string(),
                position: descriptor.position,
                timeout_ms: descriptor.timeout.as_millis(),
                summary: descriptor.summary_for(tag),
                mutates_response: descriptor.mutates_response,
            }
        })
        .collect();
    AgentTools {
        agent: agent.name().to_owned(),
        locale: tag.to_owned(),
        lists_tools: config.tools.is_some(),
        editable,
        plugins,
        hooks,
    }
}

/// The secrets the linked tools and hooks declare, as fields of an agent's
/// configuration (seed 003's requiredSecrets panel); their values are never shown.
#[derive(Serialize)]
pub(crate) struct AgentSecrets {
    pub(crate) agent: String,
    pub(crate) locale: String,
    /// Whether the panel can set them (the engine was started from a configuration file).
    pub(crate) editable: bool,
    pub(crate) secrets: Vec<SecretField>,
}

#[derive(Serialize)]
pub(crate) struct SecretField {
    #[serde(flatten)]
    pub(crate) spec: SecretSpecView,
    /// The tools and hooks that declare it.
    pub(crate) declared_by: Vec<String>,
    /// Where the agent's value comes from now.
    pub(crate) source: SecretSource,
}

/// Where an agent's secret comes from, as the panel says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum SecretSource {
    /// A variable: it wins over the panel's value.
    Environment,
    Panel,
    /// The configuration file's `[agents.<agent>.secrets]`.
    File,
    Unset,
}

impl SecretSource {
    /// Its name, as the JSON says it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Environment => "environment",
            Self::Panel => "panel",
            Self::File => "file",
            Self::Unset => "unset",
        }
    }

    pub(crate) fn of(agent: &Agent, key: &str) -> Self {
        match agent.config().secret_origin(key) {
            Some(SecretOrigin::Environment) => Self::Environment,
            Some(SecretOrigin::Panel) => Self::Panel,
            Some(SecretOrigin::File) => Self::File,
            None => Self::Unset,
        }
    }
}

/// Each secret a linked tool or hook of `engine` declares, with the tool's or hook's id.
pub(crate) fn declared_secrets(
    engine: &Engine,
) -> impl Iterator<Item = (&str, &'static SecretSpec)> {
    let tools = engine.tools().iter().flat_map(|tool| {
        tool.descriptor()
            .secret_specs()
            .map(move |spec| (tool.id(), spec))
    });
    let hooks = Event::ALL.iter().flat_map(move |&event| {
        engine.hooks(event).iter().flat_map(|hook| {
            hook.descriptor()
                .secret_specs()
                .map(move |spec| (hook.id(), spec))
        })
    });
    tools.chain(hooks)
}

/// Every secret key the linked tools and hooks declare, once each (the first
/// declaration's label), with who declares it; `source` says where the agent's value
/// comes from.
pub(crate) fn agent_secrets(
    engine: &Engine,
    agent: &Agent,
    locale: &Locale,
    editable: bool,
) -> AgentSecrets {
    let tag = locale.tag();
    let mut secrets: Vec<SecretField> = Vec::new();
    for (owner, spec) in declared_secrets(engine) {
        if let Some(field) = secrets.iter_mut().find(|field| field.spec.key == spec.key) {
            if !field.declared_by.iter().any(|id| id == owner) {
                field.declared_by.push(owner.to_owned());
            }
            continue;
        }
        secrets.push(SecretField {
            spec: SecretSpecView::new(spec, tag),
            declared_by: vec![owner.to_owned()],
            source: SecretSource::of(agent, spec.key),
        });
    }
    AgentSecrets {
        agent: agent.name().to_owned(),
        locale: tag.to_owned(),
        editable,
        secrets,
    }
}
