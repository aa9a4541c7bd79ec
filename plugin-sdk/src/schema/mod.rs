//! The canonical JSON Schemas of a tool, and the strict-mode checker the engine runs.
//!
//! Schemas come from schemars with every subschema inlined (a `$ref` remains only
//! where a type contains itself), then [`make_canonical`] rewrites them into the form
//! every provider accepts in strict mode, so none needs repair on the provider's side.

use schemars::generate::{SchemaGenerator, SchemaSettings};
use schemars::{JsonSchema, Schema};
use serde_json::{Map, Value};

mod canonical;
mod strict;

pub use canonical::make_canonical;
pub use strict::{check_strict, Violation};

/// The arguments schema of `T`: strict (closed, every property required) when `strict`.
pub fn input_schema_for<T: JsonSchema>(strict: bool) -> Schema {
    generate::<T>(strict)
}

/// The output schema of `T`, in the same canonical form without forcing strictness.
pub fn output_schema_for<T: JsonSchema + ?Sized>() -> Schema {
    generate::<T>(false)
}

/// The schema of a tool that takes no arguments: the empty closed object.
pub fn empty_object_schema() -> Schema {
    let value = serde_json::json!({
        "type": "object",
        "properties": {},
        "required": [],
        "additionalProperties": false,
    });
    Schema::try_from(value).unwrap_or_default()
}

// Only the call into schemars is generic: a tool costs no copy of the rest.
fn generate<T: JsonSchema + ?Sized>(strict: bool) -> Schema {
    canonical(generator().into_root_schema_for::<T>(), strict)
}

fn generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12()
        .with(|settings| {
            settings.meta_schema = None;
            settings.inline_subschemas = true;
        })
        .into_generator()
}

fn canonical(mut schema: Schema, strict: bool) -> Schema {
    if let Some(root) = schema.as_object_mut() {
        // The root title is the Rust type's name: noise for the model.
        root.remove("title");
    }
    let mut value = schema.to_value();
    make_canonical(&mut value, strict);
    Schema::try_from(value).unwrap_or_default()
}

/// The types a schema node names, whether `type` is one string or a list.
pub(crate) fn types(node: &Map<String, Value>) -> impl Iterator<Item = &str> {
    let listed: &[Value] = match node.get("type") {
        Some(Value::Array(list)) => list,
        Some(single) => std::slice::from_ref(single),
        None => &[],
    };
    listed.iter().filter_map(Value::as_str)
}

/// Whether a schema node is an object.
pub(crate) fn is_object(node: &Map<String, Value>) -> bool {
    node.contains_key("properties") || types(node).any(|t| t == "object")
}

/// Keywords whose value is one subschema.
pub(crate) const SINGLE_SUBSCHEMA: &[&str] = &[
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
];
/// Keywords whose value is a list of subschemas.
pub(crate) const LIST_OF_SUBSCHEMAS: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];
/// Keywords whose value maps names to subschemas.
pub(crate) const MAP_OF_SUBSCHEMAS: &[&str] =
    &["properties", "$defs", "definitions", "patternProperties"];
