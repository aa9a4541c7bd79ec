//! OpenAI chat completions: `{"type": "function", "function": {...}}`.

use serde::Serialize;
use serde_json::value::RawValue;

use super::ExternalEntry;
use crate::tool::Tool;

#[derive(Serialize)]
pub(super) struct OpenAiTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: Function<'a>,
}

#[derive(Serialize)]
struct Function<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a RawValue,
    /// Without `strict: true` OpenAI treats the schema as a hint, which is what a tool
    /// marked `strict = false` asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    strict: Option<bool>,
}

pub(super) fn tool(tool: &Tool) -> OpenAiTool<'_> {
    OpenAiTool {
        kind: "function",
        function: Function {
            name: tool.wire_name(),
            description: tool.description_with_examples(),
            parameters: tool.input_json(),
            strict: tool.descriptor().strict.then_some(true),
        },
    }
}

/// An external tool's entry: `strict` always said, `false` for a schema strict mode
/// would refuse (rendered as written, not rewritten).
pub(super) fn external<'a>(tool: &ExternalEntry<'a>) -> OpenAiTool<'a> {
    OpenAiTool {
        kind: "function",
        function: Function {
            name: tool.wire_name,
            description: tool.description,
            parameters: tool.input,
            strict: Some(tool.strict),
        },
    }
}
