//! Anthropic messages: `{"name", "description", "input_schema", "strict"}`.

use serde::Serialize;
use serde_json::value::RawValue;

use crate::external::ExternalTool;
use crate::tool::Tool;

#[derive(Serialize)]
pub(super) struct AnthropicTool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a RawValue,
    #[serde(skip_serializing_if = "Option::is_none")]
    strict: Option<bool>,
}

pub(super) fn tool(tool: &Tool) -> AnthropicTool<'_> {
    AnthropicTool {
        name: tool.wire_name(),
        description: tool.descriptor().description,
        input_schema: tool.input_json(),
        strict: tool.descriptor().strict.then_some(true),
    }
}

/// An external tool's entry: `strict` always said (see `openai::external`).
pub(super) fn external(tool: &ExternalTool) -> AnthropicTool<'_> {
    AnthropicTool {
        name: tool.wire_name(),
        description: tool.description(),
        input_schema: tool.input_json(),
        strict: Some(tool.not_strict().is_none()),
    }
}
