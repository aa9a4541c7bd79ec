//! Anthropic messages: `{"name", "description", "input_schema", "strict"}`.

use serde_json::{json, Value};

use crate::registry::Tool;

pub(super) fn tool(tool: &Tool) -> Value {
    let mut rendered = json!({
        "name": tool.wire_name(),
        "description": tool.descriptor().description,
        "input_schema": tool.input_schema(),
    });
    if tool.descriptor().strict {
        rendered["strict"] = Value::Bool(true);
    }
    rendered
}
