//! A linked tool with what start-up worked out for it: ids, schemas and their text.

use std::sync::Arc;

use plugin_sdk::engine::schema::{check_strict, Violation};
use plugin_sdk::engine::{PluginManifest, ToolDescriptor};
use serde_json::value::RawValue;
use serde_json::Value;

use crate::{gemini, wire};

/// A linked tool with what start-up worked out for it: ids and schemas, built once.
pub struct Tool {
    descriptor: &'static ToolDescriptor,
    plugin: &'static PluginManifest,
    id: String,
    /// The id again, shared with each call's audit logger without a copy.
    audit_source: Arc<str>,
    wire_name: String,
    input_schema: Value,
    output_schema: Value,
    /// The schemas as JSON text, serialized once: every catalog embeds the same text.
    input_json: Box<RawValue>,
    output_json: Box<RawValue>,
    /// What the strict re-check found (nothing for a tool marked `strict = false`).
    strict_violations: Vec<Violation>,
    /// The Gemini declaration as JSON text, or why Gemini cannot take the schema.
    gemini_declaration: Result<Box<RawValue>, String>,
}

impl Tool {
    /// Everything start-up works out for one tool, in one pass while its schema is in
    /// cache: the schemas and their text, the strict re-check, the Gemini declaration.
    pub(crate) fn new(descriptor: &'static ToolDescriptor) -> Self {
        let plugin = (descriptor.plugin)();
        let input_schema = (descriptor.input_schema)().to_value();
        let output_schema = (descriptor.output_schema)().to_value();
        let wire_name = wire::wire_name(plugin.namespace, descriptor.name);
        let strict_violations = if descriptor.strict {
            check_strict(&input_schema)
        } else {
            Vec::new()
        };
        let gemini_declaration =
            gemini::declaration(&wire_name, descriptor.description, &input_schema);
        Self {
            descriptor,
            plugin,
            id: descriptor.id(),
            audit_source: descriptor.id().into(),
            wire_name,
            input_json: raw_json(&input_schema),
            output_json: raw_json(&output_schema),
            strict_violations,
            gemini_declaration,
            input_schema,
            output_schema,
        }
    }

    /// What `#[define_tool]` registered.
    pub fn descriptor(&self) -> &'static ToolDescriptor {
        self.descriptor
    }

    /// The plugin that defines the tool.
    pub fn plugin(&self) -> &'static PluginManifest {
        self.plugin
    }

    /// The canonical id, `<namespace>:<name>`.
    pub fn id(&self) -> &str {
        &self.id
    }

    pub(crate) fn audit_source(&self) -> Arc<str> {
        Arc::clone(&self.audit_source)
    }

    /// The name every catalog gives the tool (see [`wire`]).
    pub fn wire_name(&self) -> &str {
        &self.wire_name
    }

    /// The JSON Schema of the arguments.
    pub fn input_schema(&self) -> &Value {
        &self.input_schema
    }

    /// The JSON Schema of the output.
    pub fn output_schema(&self) -> &Value {
        &self.output_schema
    }

    /// Whether the tool reads the turn's conversation (its state, artifacts, subscriber
    /// or id): it is offered only in turns that have one, so not over MCP sessions.
    pub fn needs_conversation(&self) -> bool {
        self.descriptor.needs.conversation
    }

    pub(crate) fn input_json(&self) -> &RawValue {
        &self.input_json
    }

    pub(crate) fn output_json(&self) -> &RawValue {
        &self.output_json
    }

    pub(crate) fn strict_violations(&self) -> &[Violation] {
        &self.strict_violations
    }

    pub(crate) fn gemini_declaration(&self) -> Result<&RawValue, &str> {
        match &self.gemini_declaration {
            Ok(declaration) => Ok(declaration),
            Err(reason) => Err(reason),
        }
    }
}

fn raw_json(schema: &Value) -> Box<RawValue> {
    serde_json::value::to_raw_value(schema).expect("a JSON value always serializes")
}
