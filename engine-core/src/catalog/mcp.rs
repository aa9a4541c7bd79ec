//! MCP: the `tools/list` result, with titles for people in the reader's locale.

use serde::Serialize;
use serde_json::value::RawValue;

use super::ExternalEntry;
use crate::tool::Tool;

/// Which summary text each tool shows for a locale: the addresses of the resolved
/// `&'static str`s. Two locales with the same key render the same bytes, so the cache is
/// bounded by the translations that exist, not by the tags clients send.
#[derive(Clone, PartialEq, Eq, Hash)]
pub(super) struct TitleKey(Vec<(usize, usize)>);

impl TitleKey {
    pub(super) fn new(tools: &[&Tool], locale: &str) -> Self {
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

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct McpTool<'a> {
    name: &'a str,
    title: &'a str,
    description: &'a str,
    input_schema: &'a RawValue,
    #[serde(skip_serializing_if = "Option::is_none")]
    output_schema: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "Annotations::is_empty")]
    annotations: Annotations,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Annotations {
    #[serde(skip_serializing_if = "Option::is_none")]
    read_only_hint: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    destructive_hint: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    idempotent_hint: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    open_world_hint: Option<bool>,
}

impl Annotations {
    fn is_empty(&self) -> bool {
        self.read_only_hint.is_none()
            && self.destructive_hint.is_none()
            && self.idempotent_hint.is_none()
            && self.open_world_hint.is_none()
    }
}

pub(super) fn tool<'a>(tool: &'a Tool, locale: &str) -> McpTool<'a> {
    let descriptor = tool.descriptor();
    let hints = descriptor.annotations;
    // MCP's `structuredContent` is an object, so only an object output gets a schema; a
    // tool returning a list or a scalar is served as text content alone.
    let output = tool.output();
    McpTool {
        name: tool.wire_name(),
        title: descriptor.summary_for(locale),
        description: tool.description_with_examples(),
        input_schema: tool.input_json(),
        output_schema: output.is_object.then_some(&*output.json),
        annotations: Annotations {
            read_only_hint: hints.read_only,
            destructive_hint: hints.destructive,
            idempotent_hint: hints.idempotent,
            open_world_hint: hints.open_world,
        },
    }
}

/// An external tool's entry: its summary as the title, no output schema (its output is
/// whatever JSON the command or server gives), no hints.
pub(super) fn external<'a>(tool: &ExternalEntry<'a>) -> McpTool<'a> {
    McpTool {
        name: tool.wire_name,
        title: tool.summary,
        description: tool.description,
        input_schema: tool.input,
        output_schema: None,
        annotations: Annotations {
            read_only_hint: None,
            destructive_hint: None,
            idempotent_hint: None,
            open_world_hint: None,
        },
    }
}
