//! What `tools` and `check` print: plugins and tools, hooks by event, agents and what
//! each equips.

use engine_core::{Engine, Format};
use plugin_sdk::engine::SecretSpec;
use plugin_sdk::hook::Event;
use plugin_sdk::secrets::SecretKind;

/// The plugins and their tools; a tool that needs a conversation says so, since it is
/// not offered over MCP or to `call` without `--conversation`.
pub fn list_tools(engine: &Engine, locale: &str) -> String {
    let mut out = String::new();
    for (plugin, tools) in engine.plugins() {
        let name = plugin
            .display_name
            .map_or(plugin.namespace, |text| text.resolve(locale));
        out += &format!(
            "{name} ({} {}, engine {})\n",
            plugin.package, plugin.version, plugin.engine
        );
        if let Some(description) = plugin.description {
            out += &format!("  {}\n", description.resolve(locale));
        }
        for tool in tools {
            let category = tool.descriptor().category.unwrap_or("-");
            let placed = if tool.is_action() {
                " (staged action: performed after the reply; in a conversation only, not over MCP)"
            } else if tool.needs_conversation() {
                " (in a conversation only: not over MCP)"
            } else {
                ""
            };
            out += &format!(
                "  {:<28} [{category}] {}{placed}\n",
                tool.id(),
                tool.descriptor().summary_for(locale)
            );
            for spec in tool.descriptor().secret_specs() {
                out += &format!("    {}\n", secret_line(spec, locale));
            }
        }
    }
    out += &list_channels(engine);
    out += &list_extensions(engine);
    out
}

/// A secret as the person who configures it reads it: key, type (a `select` with its
/// choices, shown as written), label.
fn secret_line(spec: &SecretSpec, locale: &str) -> String {
    let kind = match spec.kind {
        SecretKind::Select(choices) => format!("select: {}", choices.join(", ")),
        kind => kind.as_str().to_owned(),
    };
    format!(
        "secret {} ({kind}): {}",
        spec.key,
        spec.label.resolve(locale)
    )
}

/// The external tools' files, each with its state, its error and its tools; a tool whose
/// schema strict mode would refuse, or Gemini cannot take, says so.
pub fn list_extensions(engine: &Engine) -> String {
    let installed = engine.extensions();
    if installed.files().is_empty() {
        return String::new();
    }
    let mut out = String::from("External tools, by file\n");
    for file in installed.files() {
        out += &format!(
            "  {} ({}, {})\n",
            file.path.display(),
            file.kind.as_str(),
            file.state.as_str()
        );
        if let Some(error) = &file.error {
            out += &format!("    error: {error}\n");
        }
        for tool in installed
            .tools()
            .iter()
            .filter(|tool| tool.source() == file.path)
        {
            let category = tool.category().unwrap_or("-");
            out += &format!("    {:<28} [{category}] {}\n", tool.id(), tool.summary());
            if let Some(why) = tool.not_strict() {
                out += &format!("      not strict-compatible (rendered `strict: false`): {why}\n");
            }
            if let Some(why) = tool.gemini_problem() {
                out += &format!("      not offered to Gemini: {why}\n");
            }
        }
    }
    out
}

/// Whether any extension or provider file is skipped or degraded (`check` then exits
/// non-zero).
pub fn extension_problems(engine: &Engine) -> bool {
    engine
        .extensions()
        .files()
        .iter()
        .any(|file| file.error.is_some())
        || engine
            .provider_files()
            .iter()
            .any(|file| file.error.is_some())
}

/// The linked channels (plugin API version 0, unstable), each with where it is mounted.
fn list_channels(engine: &Engine) -> String {
    let mut out = String::new();
    for (channel, agent) in engine.channels() {
        let plugin = (channel.plugin)();
        let mounted = match agent {
            Some(agent) => format!("POST /channels/{} runs turns of `{agent}`", channel.name),
            None => format!(
                "not mounted: no `[channels.{}]` in the configuration",
                channel.name
            ),
        };
        let about = channel.description.lines().next().unwrap_or_default();
        let version = match plugin.api_version {
            Some(0) => "API version 0, unstable".to_owned(),
            Some(version) => format!("API version {version}"),
            None => "no API version".to_owned(),
        };
        out += &format!(
            "channel {} ({} {}, {version}): {about}\n  {mounted}\n",
            channel.name, plugin.package, plugin.version
        );
    }
    out
}

/// The hooks of each event, in the order they run, with position and timeout.
pub fn list_hooks(engine: &Engine, locale: &str) -> String {
    let mut out = String::from("Hooks, by event, in the order they run\n");
    for event in Event::ALL {
        let hooks = engine.hooks(event);
        if hooks.is_empty() {
            out += &format!("  {event}: none\n");
            continue;
        }
        out += &format!("  {event}:\n");
        for hook in hooks {
            let descriptor = hook.descriptor();
            let mutates = if descriptor.mutates_response {
                ", mutates the response"
            } else {
                ""
            };
            out += &format!(
                "    {:>5}  {:<26} {} ({} ms{mutates})\n",
                descriptor.position,
                hook.id(),
                descriptor.summary_for(locale),
                descriptor.timeout.as_millis()
            );
        }
    }
    out
}

/// What `check` prints when the engine started: what it validated and rendered.
pub fn check_report(engine: &Engine) -> String {
    let plugins = engine.plugins().count();
    let tools = engine.tools().len();
    let hooks: usize = Event::ALL
        .iter()
        .map(|&event| engine.hooks(event).len())
        .sum();
    let actions = engine
        .tools()
        .iter()
        .filter(|tool| tool.is_action())
        .count();
    let channels = engine.channels().count();
    let mut out = format!(
        "ok: {plugins} plugins, {tools} tools (staged actions: {actions}), {hooks} hooks, channels: {channels}, engine-core {}\n",
        engine_core::ENGINE_VERSION
    );
    for format in Format::ALL {
        let bytes = engine.catalog(format, "en-US").len();
        out += &format!("  catalog {format:<10} {bytes} bytes\n");
    }
    for event in Event::ALL {
        let ids: Vec<&str> = engine.hooks(event).iter().map(|hook| hook.id()).collect();
        let listed = if ids.is_empty() {
            "none".to_owned()
        } else {
            ids.join(", ")
        };
        out += &format!("  hooks {event:<18} {listed}\n");
    }
    // The variables the plugins declare, as this process has them: the default (which
    // the engine sets when the environment does not), or the environment's value, never
    // shown (it may be secret).
    if let Ok(requirements) = engine_core::SystemRequirements::linked() {
        for (name, variable) in &requirements.env {
            let state = match std::env::var_os(name) {
                None => "unset".to_owned(),
                Some(value) if value == *variable.default => {
                    format!("{:?}, the plugins' default", variable.default)
                }
                Some(_) => "set by the environment".to_owned(),
            };
            out += &format!("  env {name:<24} {state}\n");
        }
    }
    let installed = engine.extensions();
    for file in installed.files() {
        let error = file
            .error
            .as_deref()
            .map_or(String::new(), |error| format!(": {error}"));
        out += &format!(
            "  extension {} {}, {} tools{error}\n",
            file.path.display(),
            file.state.as_str(),
            file.tools.len()
        );
    }
    for file in engine.provider_files() {
        let error = file
            .error
            .as_deref()
            .map_or(String::new(), |error| format!(": {error}"));
        let used_by = if file.used_by.is_empty() {
            "no agent".to_owned()
        } else {
            file.used_by.join(", ")
        };
        out += &format!(
            "  provider file {} {}, used by {used_by}{error}\n",
            file.path.display(),
            file.state
        );
    }
    for agent in engine.agents() {
        let hooks: usize = Event::ALL
            .iter()
            .map(|&event| agent.hooks(event).len())
            .sum();
        out += &format!(
            "  agent {:<12} {} tools equipped, {} left out, {hooks} hooks, streaming of replies {}\n",
            agent.name(),
            agent.tools().count(),
            agent.left_out().len(),
            streaming(&agent)
        );
        for left in agent.left_out() {
            out += &format!("    left out {}: {}\n", left.tool, left.reasons.join("; "));
        }
        for entry in engine.unprovided_external_tools(agent.name()) {
            out += &format!(
                "    lists {entry}, which no extension file provides (a typo, or a file not there yet)\n"
            );
        }
    }
    out
}

/// Each agent's grants, the tools it equips, and the ones it leaves out with the reason;
/// the model never sees the left-out ones.
pub fn list_agents(engine: &Engine) -> String {
    let mut out = String::from("Agents\n");
    for agent in engine.agents() {
        let config = agent.config();
        let knowledge = config.knowledge.map_or("none", |level| level.as_str());
        let model = config.model.map_or("none".to_owned(), |grant| {
            format!("spend cap ${}", grant.spend_cap_usd)
        });
        let project = config
            .project
            .as_ref()
            .map_or("none".to_owned(), |project| {
                format!("{}", project.root.display())
            });
        let enables = if config.tools.is_some() {
            "the tools it lists"
        } else {
            "every tool"
        };
        out += &format!(
            "  {}: knowledge {knowledge}, model {model}, secrets {}, project {project}, enables {enables}\n",
            agent.name(),
            config.secrets.len()
        );
        let equipped: Vec<&str> = agent.tools().map(|tool| tool.id()).collect();
        out += &format!("    equips: {}\n", equipped.join(", "));
        let external: Vec<String> = agent
            .external_tools()
            .iter()
            .map(|tool| tool.id().to_owned())
            .collect();
        if !external.is_empty() {
            out += &format!("    equips external: {}\n", external.join(", "));
        }
        for left in agent.left_out() {
            out += &format!(
                "    leaves out {}: {}\n",
                left.tool,
                left.reasons.join("; ")
            );
        }
        out += &agent_hooks(&agent);
    }
    out
}

/// The hooks an agent runs, by event in the order they run, each at the agent's
/// position and timeout, and whether its replies stream.
fn agent_hooks(agent: &engine_core::Agent) -> String {
    let chooses = if agent.config().hooks.is_some() {
        "the hooks it lists"
    } else {
        "every linked hook"
    };
    let mut out = format!("    runs {chooses}\n");
    for event in Event::ALL {
        let hooks: Vec<String> = agent
            .hooks(event)
            .iter()
            .map(|hook| {
                format!(
                    "{} (at {}, {} ms)",
                    hook.id(),
                    hook.position(),
                    hook.timeout().as_millis()
                )
            })
            .collect();
        if !hooks.is_empty() {
            out += &format!("      {event}: {}\n", hooks.join(", "));
        }
    }
    for left in agent.hooks_left_out() {
        out += &format!(
            "      leaves out hook {}: {}\n",
            left.tool,
            left.reasons.join("; ")
        );
    }
    out += &format!("    streaming of replies: {}\n", streaming(agent));
    out
}

fn streaming(agent: &engine_core::Agent) -> &'static str {
    if agent.hooks_mutate_responses() {
        "off: a hook it runs may replace or regenerate replies"
    } else {
        "on"
    }
}
