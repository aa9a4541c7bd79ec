//! A linked tool with what start-up worked out for it: ids, schemas and their text.

use std::sync::{Arc, OnceLock};

use plugin_sdk::engine::schema::{check_strict, Violation};
use plugin_sdk::engine::{Needs, PluginManifest, ToolDescriptor};
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
    /// Whether its parameters read anything of the call's context (secrets, knowledge,
    /// audit, conversation, model, locale): a tool that reads none is handed the shared
    /// empty context, built for no call.
    reads_context: bool,
    /// The arguments schema as JSON text, serialized once: every catalog embeds the same
    /// text. The tree it came from is dropped once checked, so that start-up touches less
    /// memory (and a fresh process faults in fewer pages).
    input_json: Box<RawValue>,
    /// The output schema, built on first use: only MCP's catalog shows it, and nothing
    /// at start-up checks it.
    output: OnceLock<Output>,
    /// What the strict re-check found (nothing for a tool marked `strict = false`).
    strict_violations: Vec<Violation>,
    /// Why Gemini cannot take the arguments schema, if it cannot.
    gemini_problem: Option<String>,
    /// The description with the example arguments appended (see [`with_examples`]), for
    /// the catalogs that have no field for examples; `None` for a tool without examples.
    described: Option<Box<str>>,
}

impl Tool {
    /// Everything start-up works out for one tool, in one pass while its schema is in
    /// cache: the schemas and their text, the strict re-check, the Gemini declaration.
    pub(crate) fn new(descriptor: &'static ToolDescriptor) -> Self {
        let plugin = (descriptor.plugin)();
        let input_schema = (descriptor.input_schema)().to_value();
        let wire_name = wire::wire_name(plugin.namespace, descriptor.name);
        let strict_violations = if descriptor.strict {
            check_strict(&input_schema)
        } else {
            Vec::new()
        };
        let gemini_problem = gemini::problem(&input_schema);
        let id = descriptor.id();
        Self {
            descriptor,
            plugin,
            audit_source: id.as_str().into(),
            id,
            wire_name,
            input_json: raw_json(&input_schema),
            output: OnceLock::new(),
            strict_violations,
            gemini_problem,
            described: (!descriptor.examples.is_empty())
                .then(|| with_examples(descriptor.description, descriptor.examples).into()),
            reads_context: descriptor.needs != Needs::NOTHING
                || descriptor.knowledge.is_some()
                || descriptor.secret_specs().next().is_some(),
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

    pub(crate) fn reads_context(&self) -> bool {
        self.reads_context
    }

    pub(crate) fn audit_source(&self) -> Arc<str> {
        Arc::clone(&self.audit_source)
    }

    /// The name every catalog gives the tool (see [`wire`]).
    pub fn wire_name(&self) -> &str {
        &self.wire_name
    }

    /// The JSON Schema of the arguments, read from the text every catalog embeds.
    pub fn input_schema(&self) -> Value {
        parse(&self.input_json)
    }

    /// The JSON Schema of the output, read from the text the MCP catalog embeds.
    pub fn output_schema(&self) -> Value {
        parse(&self.output().json)
    }

    /// Whether a call of it runs alone in its turn's step (`#[define_tool(exclusive)]`).
    pub fn exclusive(&self) -> bool {
        self.descriptor().exclusive
    }

    /// Whether the tool reads the turn's conversation (its state, artifacts, subscriber
    /// or id), or is a staged action (recorded in the conversation): it is offered only
    /// in turns that have one, so not over MCP sessions.
    pub fn needs_conversation(&self) -> bool {
        self.descriptor.needs.conversation || self.is_action()
    }

    /// Whether it is a staged action (`#[define_action]`): a call stages it, and the
    /// turn performs it after the reply and the guardrails.
    pub fn is_action(&self) -> bool {
        self.descriptor.is_action()
    }

    /// The description as catalogs without a field for examples show it: with the
    /// example arguments appended, when the tool has some.
    pub fn description_with_examples(&self) -> &str {
        self.described
            .as_deref()
            .unwrap_or(self.descriptor.description)
    }

    /// The example arguments, as JSON text, for catalogs with a field for them.
    pub(crate) fn examples(&self) -> impl Iterator<Item = &RawValue> {
        self.descriptor.examples.iter().map(|text| {
            // Each was checked against the arguments type by the generated test, and is
            // JSON the macro serialized.
            serde_json::from_str::<&RawValue>(text).expect("an example is JSON text")
        })
    }

    pub(crate) fn input_json(&self) -> &RawValue {
        &self.input_json
    }

    /// The output schema's text, and whether the output is an object (what MCP's
    /// `structuredContent` must be).
    pub(crate) fn output(&self) -> &Output {
        self.output.get_or_init(|| {
            let schema = (self.descriptor.output_schema)().to_value();
            Output {
                is_object: schema.get("type") == Some(&Value::from("object")),
                json: raw_json(&schema),
            }
        })
    }

    pub(crate) fn strict_violations(&self) -> &[Violation] {
        &self.strict_violations
    }

    pub(crate) fn gemini_problem(&self) -> Option<&str> {
        self.gemini_problem.as_deref()
    }

    /// The Gemini declaration as JSON text, for a tool that passed the start-up check.
    pub(crate) fn gemini_declaration(&self) -> Box<RawValue> {
        let schema = parse(&self.input_json);
        gemini::declaration(&self.wire_name, self.description_with_examples(), &schema)
            .expect("start-up refuses a tool Gemini cannot take")
    }
}

/// `description` with `examples` appended in the fixed format the README documents: a
/// blank line, `Examples of arguments:`, then one compact JSON object per line, each
/// after `- `. Models read it as they read the rest of the description.
pub(crate) fn with_examples(description: &str, examples: &[&str]) -> String {
    let mut text = String::with_capacity(
        description.len() + 32 + examples.iter().map(|e| e.len() + 3).sum::<usize>(),
    );
    text.push_str(description.trim_end());
    text.push_str("\n\nExamples of arguments:");
    for example in examples {
        text.push_str("\n- ");
        text.push_str(example);
    }
    text
}

/// A tool's output schema, as MCP's catalog shows it.
pub(crate) struct Output {
    pub(crate) json: Box<RawValue>,
    pub(crate) is_object: bool,
}

fn parse(text: &RawValue) -> Value {
    serde_json::from_str(text.get()).expect("the text was serialized from a JSON value")
}

fn raw_json(schema: &Value) -> Box<RawValue> {
    serde_json::value::to_raw_value(schema).expect("a JSON value always serializes")
}
