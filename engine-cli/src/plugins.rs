//! `plugins`: the linked plugins' catalogue, what a marketplace page shows of each (its
//! names and descriptions in every language it gives, category, publisher,
//! documentation, icon) and the tools, hooks and channels it brings. Read from what is linked: no
//! configuration is needed.

use std::process::ExitCode;

use base64::Engine as _;
use plugin_sdk::channel::linked_channels;
use plugin_sdk::engine::{
    linked_hooks, linked_plugins, linked_tools, HookDescriptor, LocalizedText, PluginManifest,
    ToolDescriptor,
};
use serde_json::{json, Map, Value};

use crate::args::PluginsFormat;

/// Prints the catalogue in `format`, text in `locale`.
pub(crate) fn print(format: PluginsFormat, locale: &str) -> ExitCode {
    let mut plugins: Vec<&PluginManifest> = linked_plugins().collect();
    plugins.sort_by_key(|plugin| plugin.namespace);
    match format {
        PluginsFormat::Json => {
            let catalogue: Vec<Value> = plugins.into_iter().map(as_json).collect();
            let text = serde_json::to_string_pretty(&catalogue).expect("JSON values serialize");
            println!("{text}");
        }
        PluginsFormat::Text => print!("{}", as_text(&plugins, locale)),
    }
    ExitCode::SUCCESS
}

/// One plugin as a catalogue entry: texts with every language they give.
fn as_json(plugin: &PluginManifest) -> Value {
    let catalogue = &plugin.catalogue;
    let tools: Vec<Value> = tools_of(plugin)
        .into_iter()
        .map(|tool| {
            json!({
                "id": tool.id(),
                "summary": tool.summary.map(localized),
                "category": tool.category,
                "action": tool.is_action(),
            })
        })
        .collect();
    let hooks: Vec<Value> = hooks_of(plugin)
        .into_iter()
        .map(|hook| {
            json!({
                "id": hook.id(),
                "event": hook.event().as_str(),
                "summary": hook.summary.map(localized),
            })
        })
        .collect();
    let channels = channels_of(plugin);
    json!({
        "namespace": plugin.namespace,
        "package": plugin.package,
        "version": plugin.version,
        "engine": plugin.engine,
        "api_version": plugin.api_version,
        "display_name": plugin.display_name.map(localized),
        "description": plugin.description.map(localized),
        "long_description": catalogue.long_description.map(localized),
        "category": catalogue.category.map(localized),
        "publisher": catalogue.publisher,
        "documentation_url": catalogue.documentation_url,
        "icon": catalogue.icon.map(|icon| json!({
            "media_type": icon.media_type,
            "size": icon.bytes.len(),
            "data_url": format!(
                "data:{};base64,{}",
                icon.media_type,
                base64::engine::general_purpose::STANDARD.encode(icon.bytes)
            ),
        })),
        "tools": tools,
        "hooks": hooks,
        "channels": channels,
        "oauth": oauth_providers(plugin)
            .map(|(id, provider)| json!({
                "id": id,
                "authorize_url": provider.authorize_url,
                "token_url": provider.token_url,
                "scopes": provider.scopes,
            }))
            .collect::<Vec<_>>(),
    })
}

/// The OAuth providers `plugin` declares, each with the id an agent's client is keyed by
/// (`[agents.<agent>.oauth."<namespace>:<id>"]`).
fn oauth_providers(
    plugin: &PluginManifest,
) -> impl Iterator<Item = (String, &'static plugin_sdk::oauth::OAuthProvider)> + '_ {
    plugin
        .oauth
        .iter()
        .map(move |provider| (format!("{}:{}", plugin.namespace, provider.id), provider))
}

/// A LocalizedText as JSON: a plain string, or a map of tags to texts.
fn localized(text: LocalizedText) -> Value {
    let mut map = Map::new();
    for (tag, text) in text.entries() {
        match tag {
            None => return Value::from(text),
            Some(tag) => map.insert(tag.to_owned(), Value::from(text)),
        };
    }
    Value::Object(map)
}

/// The catalogue for a person reading `locale`: each plugin apart from the next by a
/// blank line.
fn as_text(plugins: &[&PluginManifest], locale: &str) -> String {
    if plugins.is_empty() {
        return "no plugin is linked into this engine\n".to_owned();
    }
    let mut out = String::new();
    for (at, plugin) in plugins.iter().enumerate() {
        if at > 0 {
            out.push('\n');
        }
        let catalogue = &plugin.catalogue;
        let name = plugin
            .display_name
            .map_or(plugin.namespace, |text| text.resolve(locale));
        let publisher = catalogue
            .publisher
            .map(|publisher| format!(", by {publisher}"))
            .unwrap_or_default();
        out += &format!(
            "{name} ({} {}{publisher})\n",
            plugin.package, plugin.version
        );
        let lines = [
            (
                "category",
                catalogue.category.map(|text| text.resolve(locale)),
            ),
            ("about", plugin.description.map(|text| text.resolve(locale))),
            ("docs", catalogue.documentation_url),
            ("icon", catalogue.icon.map(|icon| icon.media_type)),
        ];
        for (what, line) in lines {
            if let Some(line) = line {
                out += &format!("  {what:<9}{line}\n");
            }
        }
        for (id, provider) in oauth_providers(plugin) {
            out += &format!("  {:<9}{id} ({})\n", "oauth", provider.scopes.join(" "));
        }
        if let Some(long) = catalogue.long_description {
            for line in long.resolve(locale).trim().lines() {
                match line.trim_end() {
                    "" => out.push('\n'),
                    line => out += &format!("    {line}\n"),
                }
            }
        }
        let brings: [(&str, Vec<String>); 3] = [
            (
                "tools",
                tools_of(plugin).iter().map(|tool| tool.id()).collect(),
            ),
            (
                "hooks",
                hooks_of(plugin).iter().map(|hook| hook.id()).collect(),
            ),
            (
                "channels",
                channels_of(plugin)
                    .iter()
                    .map(|name| name.to_string())
                    .collect(),
            ),
        ];
        for (what, items) in brings {
            if !items.is_empty() {
                out += &format!("  {what:<9}{}\n", items.join(", "));
            }
        }
    }
    out
}

/// The linked tools of `plugin`, by name: link order changes from one build to the next.
fn tools_of(plugin: &PluginManifest) -> Vec<&'static ToolDescriptor> {
    let mut tools: Vec<_> = linked_tools()
        .filter(|tool| of(plugin, tool.plugin))
        .collect();
    tools.sort_by_key(|tool| tool.name);
    tools
}

/// The linked hooks of `plugin`, by name.
fn hooks_of(plugin: &PluginManifest) -> Vec<&'static HookDescriptor> {
    let mut hooks: Vec<_> = linked_hooks()
        .filter(|hook| of(plugin, hook.plugin))
        .collect();
    hooks.sort_by_key(|hook| hook.name);
    hooks
}

/// The names of the linked channels of `plugin`, sorted.
fn channels_of(plugin: &PluginManifest) -> Vec<&'static str> {
    let mut names: Vec<_> = linked_channels()
        .filter(|channel| of(plugin, channel.plugin))
        .map(|channel| channel.name)
        .collect();
    names.sort_unstable();
    names
}

/// Whether a registration whose plugin is `declared` is `plugin`'s.
fn of(plugin: &PluginManifest, declared: fn() -> &'static PluginManifest) -> bool {
    std::ptr::eq(declared(), plugin)
}
