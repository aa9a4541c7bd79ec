//! What the configuration says about the linked binary: the tools each agent enables,
//! the secrets it holds, the channels it mounts, the providers its turns use. Each
//! mismatch is a problem start-up refuses and `engine config check` reports, beside
//! those the configuration has on its own ([`EngineConfig::check`]).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use plugin_sdk::engine::{linked_plugins, linked_tools};
use plugin_sdk::secrets::SecretKind;

use crate::config::{
    fix_for_unknown, AgentConfig, ConfigProblem, EngineConfig, ProviderConfig, SecretOrigin,
};
use crate::equip::missing;
use crate::hooks::Hook;
use crate::provider::{self as drop_in, Provider};
use crate::registry::Registry;
use crate::tool::Tool;

/// Every problem between `config` and what `registry` links (with `given` providers
/// set on the builder).
pub(super) fn problems(
    config: &EngineConfig,
    registry: &Registry,
    given: &BTreeMap<String, Arc<dyn Provider>>,
    dropped_in: &BTreeMap<String, ProviderConfig>,
) -> Vec<ConfigProblem> {
    let mut problems = Vec::new();
    for (name, agent) in &config.agents {
        enabled_tools(name, agent, registry, &mut problems);
        enabled_hooks(name, agent, registry, &mut problems);
        external_tools(name, agent, registry, &mut problems);
        plugin_settings(name, agent, &mut problems);
        oauth_clients(name, agent, &mut problems);
        unused_secrets(name, agent, config, dropped_in, registry, &mut problems);
        secret_choices(name, agent, registry, &mut problems);
        if let Some(turn) = &agent.turn {
            let configured =
                config.providers.contains_key(&turn.provider) || given.contains_key(&turn.provider);
            let file_problem = dropped_in
                .get(&turn.provider)
                .filter(|_| !configured)
                .and_then(|provider| drop_in::key_problem(name, agent, &turn.provider, provider));
            if let Some(problem) = file_problem {
                problems.push(ConfigProblem::new(
                    format!("agents.{name}.turn.provider"),
                    format!(
                        "names `{}`, which a file of the providers directory offers and the agent cannot use",
                        turn.provider
                    ),
                    problem,
                ));
            }
            if !configured && !dropped_in.contains_key(&turn.provider) {
                problems.push(ConfigProblem::new(
                    format!("agents.{name}.turn.provider"),
                    format!("names `{}`, which is not configured", turn.provider),
                    fix_for_unknown(
                        &turn.provider,
                        config
                            .providers
                            .keys()
                            .chain(given.keys())
                            .chain(dropped_in.keys()),
                        |names| {
                            format!(
                                "add [providers.{}] or a file of the providers directory, or name one of {names}",
                                turn.provider
                            )
                        },
                        &format!(
                            "add [providers.{}], or a file of the providers directory: no provider is configured",
                            turn.provider
                        ),
                    ),
                ));
            }
        }
    }
    for name in config.channels.keys() {
        if !registry.channels.iter().any(|channel| channel.name == name) {
            problems.push(ConfigProblem::new(
                format!("channels.{name}"),
                "mounts a channel no linked plugin defines",
                fix_for_unknown(
                    name,
                    registry.channels.iter().map(|channel| channel.name),
                    |names| format!("mount one of the linked channels ({names}), or link the plugin that defines it"),
                    "link the plugin that defines it: this engine links no channel",
                ),
            ));
        }
    }
    problems
}

/// An agent's `tools` list: every id a linked tool's, every tool one the agent can
/// equip (a listed tool left out for want of a secret, a grant or a project root is a
/// mistake the list makes plain).
fn enabled_tools(
    name: &str,
    agent: &AgentConfig,
    registry: &Registry,
    problems: &mut Vec<ConfigProblem>,
) {
    let Some(enabled) = &agent.tools else { return };
    let key = format!("agents.{name}.tools");
    for id in enabled {
        match registry.tools().iter().find(|tool| tool.id() == id) {
            None => problems.push(ConfigProblem::new(
                &key,
                format!("names `{id}`, which no linked plugin defines"),
                fix_for_unknown(
                    id,
                    registry.tools().iter().map(Tool::id),
                    |names| {
                        format!(
                            "name linked tools only ({names}), or link the plugin that defines it"
                        )
                    },
                    "link the plugin that defines it: this engine links no tool",
                ),
            )),
            Some(tool) => {
                for reason in missing(name, agent, tool) {
                    problems.push(ConfigProblem::new(
                        &key,
                        format!("enables `{id}`, which the agent cannot equip: {reason}"),
                        "give the agent what the tool needs, or take the tool out of the list",
                    ));
                }
            }
        }
    }
}

/// An agent's `hooks` list: each a linked hook's id, once, at a timeout within the one
/// the hook declares (the most its author says it needs).
fn enabled_hooks(
    name: &str,
    agent: &AgentConfig,
    registry: &Registry,
    problems: &mut Vec<ConfigProblem>,
) {
    let Some(chosen) = &agent.hooks else { return };
    let linked: Vec<&Hook> = registry.hooks.all().collect();
    for (index, choice) in chosen.iter().enumerate() {
        let key = format!("agents.{name}.hooks.{index}");
        let id = choice.id();
        let Some(hook) = linked.iter().find(|hook| hook.id() == id) else {
            problems.push(ConfigProblem::new(
                &key,
                format!("names `{id}`, which no linked plugin defines"),
                fix_for_unknown(
                    id,
                    linked.iter().map(|hook| hook.id()),
                    |names| {
                        format!(
                            "name linked hooks only ({names}), or link the plugin that defines it"
                        )
                    },
                    "link the plugin that defines it: this engine links no hook",
                ),
            ));
            continue;
        };
        for reason in hook.missing_secrets(&agent.secrets) {
            problems.push(ConfigProblem::new(
                &key,
                format!("runs `{id}`, which the agent cannot run: {reason}"),
                "give the agent the secret, or take the hook out of the list",
            ));
        }
        if chosen[..index].iter().any(|earlier| earlier.id() == id) {
            problems.push(ConfigProblem::new(
                &key,
                format!("names `{id}` a second time"),
                "name each hook once",
            ));
        }
        let declared = hook.descriptor().timeout.as_millis() as u64;
        match choice.timeout_ms() {
            Some(0) => problems.push(ConfigProblem::new(
                format!("{key}.timeout_ms"),
                "is 0, which no hook can run within",
                format!("give `{id}` at least 1 ms, at most the {declared} ms it declares"),
            )),
            Some(asked) if asked > declared => problems.push(ConfigProblem::new(
                format!("{key}.timeout_ms"),
                format!("is {asked} ms, more than the {declared} ms `{id}` declares"),
                format!("give it at most {declared} ms; the hook's author bounds how long it may hold a turn"),
            )),
            _ => {}
        }
    }
}

/// An agent's `external_tools` list: each entry `<namespace>:<name>` or `<namespace>:*`
/// in a namespace no linked plugin has and the engine does not keep. Whether a file
/// provides it is known only when the files are read (`engine check` lists those none
/// provides).
fn external_tools(
    name: &str,
    agent: &AgentConfig,
    registry: &Registry,
    problems: &mut Vec<ConfigProblem>,
) {
    let Some(listed) = &agent.external_tools else {
        return;
    };
    let key = format!("agents.{name}.external_tools");
    for entry in listed {
        let Some((namespace, _)) = entry
            .split_once(':')
            .filter(|(namespace, tool)| !namespace.is_empty() && !tool.is_empty())
        else {
            problems.push(ConfigProblem::new(
                &key,
                format!("has `{entry}`, which is not `<namespace>:<name>` or `<namespace>:*`"),
                "write an external tool's id, such as `local:word_count`, or `local:*` for a namespace",
            ));
            continue;
        };
        if crate::RESERVED_NAMESPACES.contains(&namespace)
            || registry
                .plugins()
                .any(|(plugin, _)| plugin.namespace == namespace)
        {
            problems.push(ConfigProblem::new(
                &key,
                format!("has `{entry}`, in `{namespace}`, a namespace of linked tools"),
                format!("list linked tools in `agents.{name}.tools`; `external_tools` names the tools of extension files"),
            ));
        }
    }
}

/// An agent's settings for plugins: each for a linked plugin that takes settings, and
/// settings that plugin reads.
/// An agent's OAuth clients, each for a provider a linked plugin declares.
fn oauth_clients(name: &str, agent: &AgentConfig, problems: &mut Vec<ConfigProblem>) {
    let declared: BTreeSet<String> = linked_plugins()
        .flat_map(|plugin| {
            plugin
                .oauth
                .iter()
                .map(move |provider| format!("{}:{}", plugin.namespace, provider.id))
        })
        .collect();
    for provider in agent.oauth.keys() {
        if !declared.contains(provider) {
            problems.push(ConfigProblem::new(
                format!("agents.{name}.oauth.\"{provider}\""),
                "is a client for a provider no linked plugin declares",
                fix_for_unknown(
                    provider,
                    &declared,
                    |names| format!("key it by one of {names}"),
                    "remove it: no linked plugin declares an OAuth provider",
                ),
            ));
        }
    }
}

fn plugin_settings(name: &str, agent: &AgentConfig, problems: &mut Vec<ConfigProblem>) {
    for (namespace, settings) in &agent.plugins {
        let key = format!("agents.{name}.plugins.{namespace}");
        // Every linked plugin, not only those of the tools a builder chose to serve.
        let plugin = linked_plugins().find(|plugin| plugin.namespace == namespace);
        let Some(plugin) = plugin else {
            problems.push(ConfigProblem::new(
                key,
                "configures a plugin nothing links",
                fix_for_unknown(
                    namespace,
                    sorted(linked_plugins().map(|plugin| plugin.namespace)),
                    |names| {
                        format!(
                            "name a linked plugin by its namespace ({names}), or link the plugin"
                        )
                    },
                    "link the plugin: this engine links none",
                ),
            ));
            continue;
        };
        let Some(state) = plugin.state else {
            problems.push(ConfigProblem::new(
                key,
                format!("configures `{}`, which takes no settings", plugin.package),
                "remove the table",
            ));
            continue;
        };
        let settings = match settings_value(settings) {
            Ok(settings) => settings,
            Err((below, what)) => {
                problems.push(ConfigProblem::new(
                    format!("{key}.{below}"),
                    format!("is {what}, which plugin settings cannot hold"),
                    "give a finite number, a string, a boolean, an array or a table",
                ));
                continue;
            }
        };
        for problem in state.check(&settings) {
            let key = match problem.key.as_str() {
                "" => key.clone(),
                below => format!("{key}.{below}"),
            };
            problems.push(ConfigProblem::new(
                key,
                problem.problem,
                format!(
                    "give the settings `{}` documents for its state `{}`",
                    plugin.package,
                    state.state.name()
                ),
            ));
        }
    }
}

/// A plugin's settings as the SDK hands them to the plugin's `Deserialize`: JSON. A
/// value JSON has no place for (`nan`, `inf`, a date) is refused with its key, rather
/// than turned into `null` and read as an absent setting.
pub(super) fn settings_value(
    settings: &toml::Table,
) -> Result<serde_json::Value, (String, &'static str)> {
    fn value(item: &toml::Value, key: &str) -> Result<serde_json::Value, (String, &'static str)> {
        use serde_json::Value as Json;
        Ok(match item {
            toml::Value::String(text) => Json::String(text.clone()),
            toml::Value::Integer(number) => Json::from(*number),
            toml::Value::Float(number) => serde_json::Number::from_f64(*number)
                .map(Json::Number)
                .ok_or((key.to_owned(), "not a finite number"))?,
            toml::Value::Boolean(flag) => Json::Bool(*flag),
            toml::Value::Datetime(_) => return Err((key.to_owned(), "a date")),
            toml::Value::Array(values) => Json::Array(
                values
                    .iter()
                    .enumerate()
                    .map(|(index, item)| value(item, &format!("{key}.{index}")))
                    .collect::<Result<_, _>>()?,
            ),
            toml::Value::Table(table) => table_value(table, &format!("{key}."))?,
        })
    }
    fn table_value(
        table: &toml::Table,
        prefix: &str,
    ) -> Result<serde_json::Value, (String, &'static str)> {
        let mut object = serde_json::Map::with_capacity(table.len());
        for (name, item) in table {
            object.insert(name.clone(), value(item, &format!("{prefix}{name}"))?);
        }
        Ok(serde_json::Value::Object(object))
    }
    table_value(settings, "")
}

/// An agent's secrets that nothing it enables reads: a typo in a key would otherwise
/// leave the tool that needs it silently off.
fn unused_secrets(
    name: &str,
    agent: &AgentConfig,
    config: &EngineConfig,
    dropped_in: &BTreeMap<String, ProviderConfig>,
    registry: &Registry,
    problems: &mut Vec<ConfigProblem>,
) {
    // Every linked tool the agent enables, not only those a builder chose to serve.
    let linked = registry
        .tools()
        .iter()
        .map(Tool::descriptor)
        .chain(linked_tools());
    let mut read: BTreeSet<&str> = linked
        .filter(|tool| {
            agent
                .tools
                .as_ref()
                .is_none_or(|ids| ids.iter().any(|id| *id == tool.id()))
        })
        .flat_map(|tool| tool.secret_specs().map(|spec| spec.key))
        .collect();
    let provider_key = agent
        .turn
        .as_ref()
        .and_then(|turn| {
            config
                .providers
                .get(&turn.provider)
                .or_else(|| dropped_in.get(&turn.provider))
        })
        .and_then(|provider| provider.api_key_secret.as_deref());
    read.extend(provider_key);
    // The hooks it runs read the secrets they declare.
    // Every hook it chooses, whether or not it configures all the hook's secrets.
    let chooses = |hook: &&Hook| {
        agent
            .hooks
            .as_ref()
            .is_none_or(|chosen| chosen.iter().any(|choice| choice.id() == hook.id()))
    };
    read.extend(
        registry
            .hooks
            .all()
            .filter(chooses)
            .flat_map(|hook| hook.descriptor().secret_specs())
            .map(|spec| spec.key),
    );
    // Dev sessions' tools read the secrets the agent lists for them.
    let for_dev = agent.dev.iter().flat_map(|dev| dev.secrets.iter());
    for key in for_dev.clone() {
        if !agent.secrets.contains_key(key) {
            problems.push(ConfigProblem::new(
                format!("agents.{name}.dev.secrets"),
                format!("names `{key}`, a secret the agent does not have"),
                format!("give it in `[agents.{name}.secrets]` or as ENGINE_SECRET__{name}__{key}, or remove it from the list"),
            ));
        }
    }
    read.extend(for_dev.map(String::as_str));
    // Its OAuth clients read their secrets.
    read.extend(
        agent
            .oauth
            .values()
            .map(|client| client.client_secret.as_str()),
    );
    for key in agent.secrets.keys() {
        let from_panel = agent.secret_origin(key) == Some(SecretOrigin::Panel);
        if !read.contains(key.as_str()) && !from_panel {
            problems.push(ConfigProblem::new(
                format!("agents.{name}.secrets.{key}"),
                "is a secret nothing the agent enables reads",
                fix_for_unknown(
                    key,
                    &read,
                    |names| format!("correct the key, or remove it (the agent's tools, hooks and provider read {names})"),
                    "remove it: the agent's tools, hooks and provider read no secret",
                ),
            ));
        }
    }
}

/// An agent's secrets that a `select` declares: each value one of its choices. The value
/// is never quoted: it is a secret.
fn secret_choices(
    name: &str,
    agent: &AgentConfig,
    registry: &Registry,
    problems: &mut Vec<ConfigProblem>,
) {
    let tools = registry
        .tools()
        .iter()
        .flat_map(|tool| tool.descriptor().secret_specs());
    let hooks = registry
        .hooks
        .all()
        .flat_map(|hook| hook.descriptor().secret_specs());
    let mut reported = BTreeSet::new();
    for spec in tools.chain(hooks) {
        let SecretKind::Select(choices) = spec.kind else {
            continue;
        };
        let Some(value) = agent.secrets.get(spec.key) else {
            continue;
        };
        if !choices.contains(&value.as_str()) && reported.insert(spec.key) {
            problems.push(ConfigProblem::new(
                format!("agents.{name}.secrets.{}", spec.key),
                "is not one of the values its `select` offers",
                // No nearest choice: that would tell how far the secret's value is from it.
                format!(
                    "set it to one of {}",
                    choices
                        .iter()
                        .map(|choice| format!("`{choice}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
    }
}

/// `names` in order: link order depends on the linker.
fn sorted<'a>(names: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut names: Vec<&str> = names.collect();
    names.sort_unstable();
    names
}
