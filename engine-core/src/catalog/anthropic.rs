//! Anthropic messages: `{"name", "description", "input_schema", "input_examples", "strict"}`.
//!
//! `input_examples` is Anthropic's field for example arguments (the `advanced-tool-use`
//! beta, whose header the provider sends when a catalog carries examples).

use serde::Serialize;
use serde_json::value::RawValue;

use super::ExternalEntry;
use crate::tool::Tool;

#[derive(Serialize)]
pub(super) struct AnthropicTool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a RawValue,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    input_examples: Vec<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    strict: Option<bool>,
}

pub(super) fn tool(tool: &Tool) -> AnthropicTool<'_> {
    AnthropicTool {
        name: tool.wire_name(),
        description: tool.descriptor().description,
        input_schema: tool.input_json(),
        input_examples: tool.examples().collect(),
        strict: tool.descriptor().strict.then_some(true),
    }
}

/// An external tool's entry: `strict` always said (see `openai::external`).
pub(super) fn external<'a>(tool: &ExternalEntry<'a>) -> AnthropicTool<'a> {
    AnthropicTool {
        name: tool.wire_name,
        description: tool.description,
        input_schema: tool.input,
        input_examples: Vec::new(),
        strict: Some(tool.strict),
    }
}
