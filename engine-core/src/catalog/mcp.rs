//! MCP: the `tools/list` result, with titles for people in the reader's locale.

use serde_json::{json, Map, Value};

use crate::registry::Tool;

/// Which summary text each tool shows for a locale: the addresses of the resolved
/// `&'static str`s. Two locales with the same key render the same bytes, so the cache is
/// bounded by the translations that exist, not by the tags clients send.
#[derive(Clone, PartialEq, Eq, Hash)]
pub(super) struct TitleKey(Vec<(usize, usize)>);

impl TitleKey {
    pub(super) fn new(tools: &[Tool], locale: &str) -> Self {
        Self(
            tools
                .iter()
                .map(|tool| {
                    let title = tool.descriptor().summary_for(locale);
                    (title.as_ptr() as usize, title.len())
                })
                .collect(),
        )
    }
}

pub(super) fn tools_list(tools: &[Tool], locale: &str) -> Value {
    let tools: Vec<Value> = tools.iter().map(|tool| self::tool(tool, locale)).collect();
    json!({ "tools": tools })
}

fn tool(tool: &Tool, locale: &str) -> Value {
    let descriptor = tool.descriptor();
    let mut rendered = json!({
        "name": tool.wire_name(),
        "title": descriptor.summary_for(locale),
        "description": descriptor.description,
        "inputSchema": tool.input_schema(),
    });
    // MCP's `structuredContent` is an object, so only an object output gets a schema; a
    // tool returning a list or a scalar is served as text content alone.
    if tool.output_schema().get("type") == Some(&Value::from("object")) {
        rendered["outputSchema"] = tool.output_schema().clone();
    }
    let hints = descriptor.annotations;
    let mut annotations = Map::new();
    for (key, hint) in [
        ("readOnlyHint", hints.read_only),
        ("destructiveHint", hints.destructive),
        ("idempotentHint", hints.idempotent),
        ("openWorldHint", hints.open_world),
    ] {
        if let Some(hint) = hint {
            annotations.insert(key.into(), Value::Bool(hint));
        }
    }
    if !annotations.is_empty() {
        rendered["annotations"] = Value::Object(annotations);
    }
    rendered
}
