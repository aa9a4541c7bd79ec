//! OpenAI chat completions: `{"type": "function", "function": {...}}`.

use serde_json::{json, Value};

use crate::registry::Tool;

pub(super) fn tool(tool: &Tool) -> Value {
    let mut function = json!({
        "name": tool.wire_name(),
        "description": tool.descriptor().description,
        "parameters": tool.input_schema(),
    });
    // Without `strict: true` OpenAI treats the schema as a hint, which is what a tool
    // marked `strict = false` asked for.
    if tool.descriptor().strict {
        function["strict"] = Value::Bool(true);
    }
    json!({ "type": "function", "function": function })
}
