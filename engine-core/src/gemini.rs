//! Gemini function declarations, in the OpenAPI 3.0 schema subset Gemini accepts.
//!
//! The subset has no references, no `additionalProperties` and no `const`; nullability is
//! `nullable: true` on a single `type`. Everything else the canonical schema says that
//! the subset cannot is dropped: dispatch checks the arguments against the full type
//! anyway.

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

/// Keywords of the subset this renderer emits, each converted recursively if it holds
/// schemas.
const KEPT: &[&str] = &[
    "type",
    "title",
    "description",
    "enum",
    "properties",
    "required",
    "items",
    "anyOf",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
];

/// Why Gemini cannot take a schema: the text a tool keeps as its verdict, and what the
/// start-up check says.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Unsupported(String);

/// Why Gemini cannot take `schema`, if it cannot: what [`declaration`] would refuse,
/// found without building anything (start-up checks every tool; the declarations are
/// rendered when the Gemini catalog is first asked for). A verdict a tool keeps, not a
/// failure.
pub(crate) fn problem(schema: &Value) -> Option<String> {
    check(schema).err().map(|Unsupported(why)| why)
}

/// [`problem`], as `Err`, for `?` down the schema.
fn check(schema: &Value) -> Result<(), Unsupported> {
    let Some(node) = schema.as_object() else {
        return Err(Unsupported(UNTYPED.into()));
    };
    if let Some(target) = node.get("$ref") {
        return Err(recursive(target));
    }
    for (key, value) in node {
        match key.as_str() {
            "type" => {
                single_type(value)?;
            }
            "anyOf" => {
                for branch in value.as_array().into_iter().flatten() {
                    if !is_null_schema(branch) {
                        check(branch)?;
                    }
                }
            }
            "properties" => {
                for property in value.as_object().into_iter().flat_map(Map::values) {
                    check(property)?;
                }
            }
            "items" => check(value)?,
            _ => {}
        }
    }
    Ok(())
}

const UNTYPED: &str = "it has an untyped value (`true`), which Gemini cannot declare";

fn recursive(target: &Value) -> Unsupported {
    Unsupported(format!(
        "it refers to {target} (a recursive type), and Gemini's schema subset has no references"
    ))
}

/// The declaration of the tool `name`, as JSON text, or why Gemini cannot take it.
pub(crate) fn declaration(
    name: &str,
    description: &str,
    input_schema: &Value,
) -> Result<Box<RawValue>, Unsupported> {
    let parameters = convert(input_schema)?;
    // Gemini documents leaving `parameters` unset for a function without any.
    let has_parameters = parameters
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|properties| !properties.is_empty());
    let declaration = Declaration {
        name,
        description,
        parameters: has_parameters.then_some(&parameters),
    };
    Ok(serde_json::value::to_raw_value(&declaration).expect("a JSON value always serializes"))
}

/// Gemini's `FunctionDeclaration`, serialized from borrowed parts.
#[derive(Serialize)]
struct Declaration<'a> {
    name: &'a str,
    description: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    parameters: Option<&'a Value>,
}

fn is_null_schema(schema: &Value) -> bool {
    schema.get("type") == Some(&Value::from("null"))
}

/// One schema node in the subset.
fn convert(schema: &Value) -> Result<Value, Unsupported> {
    let Some(node) = schema.as_object() else {
        return Err(Unsupported(UNTYPED.into()));
    };
    if let Some(target) = node.get("$ref") {
        return Err(recursive(target));
    }
    let mut out = Map::with_capacity(node.len() + 1);
    let mut nullable = false;
    for (key, value) in node {
        match key.as_str() {
            "type" => {
                let (kind, null) = single_type(value)?;
                out.insert("type".into(), kind.clone());
                nullable |= null;
            }
            "const" => {
                out.insert("enum".into(), json!([value]));
            }
            "enum" => {
                let values = value.as_array().map(Vec::as_slice).unwrap_or_default();
                nullable |= values.contains(&Value::Null);
                let kept: Vec<Value> = values.iter().filter(|v| !v.is_null()).cloned().collect();
                out.insert("enum".into(), Value::Array(kept));
            }
            "anyOf" => {
                let branches = value.as_array().map(Vec::as_slice).unwrap_or_default();
                nullable |= branches.iter().any(is_null_schema);
                let mut kept = branches
                    .iter()
                    .filter(|branch| !is_null_schema(branch))
                    .map(convert)
                    .collect::<Result<Vec<_>, _>>()?;
                if kept.len() == 1 {
                    // `Option<Struct>`: the struct itself, nullable; this node's own
                    // description wins over the branch's.
                    if let Value::Object(branch) = kept.remove(0) {
                        for (key, value) in branch {
                            out.entry(key).or_insert(value);
                        }
                    }
                } else {
                    out.insert("anyOf".into(), Value::Array(kept));
                }
            }
            "properties" => {
                let mut properties = Map::new();
                for (name, property) in value.as_object().into_iter().flatten() {
                    properties.insert(name.clone(), convert(property)?);
                }
                // Gemini orders properties alphabetically unless told otherwise; keep the
                // author's order, which is the order the model reads them in.
                let order: Vec<Value> = properties.keys().cloned().map(Value::from).collect();
                out.insert("properties".into(), Value::Object(properties));
                out.insert("propertyOrdering".into(), Value::Array(order));
            }
            "items" => {
                out.insert("items".into(), convert(value)?);
            }
            _ if KEPT.contains(&key.as_str()) => {
                out.insert(key.clone(), value.clone());
            }
            _ => {}
        }
    }
    if nullable {
        out.insert("nullable".into(), Value::Bool(true));
    }
    Ok(Value::Object(out))
}

/// The one type of a node and whether it is nullable: `["string", "null"]` is `string`.
fn single_type(value: &Value) -> Result<(&Value, bool), Unsupported> {
    let Some(types) = value.as_array() else {
        return Ok((value, false));
    };
    let null = types.iter().any(|kind| kind == "null");
    let mut others = types.iter().filter(|kind| *kind != "null");
    match (others.next(), others.next()) {
        (Some(kind), None) => Ok((kind, null)),
        _ => Err(Unsupported(format!(
            "a value may be any of {value}, and Gemini takes one type per value"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nullable_types_enums_and_options_become_nullable() {
        let schema = json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "note": { "type": ["string", "null"], "description": "A note." },
                "state": { "type": ["string", "null"], "enum": ["open", "shipped", null] },
                "address": {
                    "description": "Where.",
                    "anyOf": [
                        { "type": "object", "additionalProperties": false,
                          "properties": { "city": { "type": "string" } }, "required": ["city"] },
                        { "type": "null" }
                    ]
                },
                "kind": { "anyOf": [{ "const": "a", "type": "string" }, { "const": "b", "type": "string" }] }
            },
            "required": ["note", "state", "address", "kind"]
        });
        assert_eq!(check(&schema), Ok(()));
        let converted = convert(&schema).unwrap();
        assert_eq!(
            converted,
            json!({
                "type": "object",
                "properties": {
                    "note": { "type": "string", "description": "A note.", "nullable": true },
                    "state": { "type": "string", "enum": ["open", "shipped"], "nullable": true },
                    "address": {
                        "description": "Where.",
                        "type": "object",
                        "properties": { "city": { "type": "string" } },
                        "propertyOrdering": ["city"],
                        "required": ["city"],
                        "nullable": true
                    },
                    "kind": { "anyOf": [{ "enum": ["a"], "type": "string" }, { "enum": ["b"], "type": "string" }] }
                },
                "propertyOrdering": ["note", "state", "address", "kind"],
                "required": ["note", "state", "address", "kind"]
            })
        );
    }

    #[test]
    fn references_and_untyped_values_are_refused() {
        let recursive =
            json!({ "type": "object", "properties": { "next": { "$ref": "#/$defs/Node" } } });
        let untyped = json!({ "properties": { "any": true } });
        let two_types = json!({ "type": ["string", "integer"] });
        let in_an_option = json!({ "anyOf": [{ "type": "null" }, { "items": true }] });
        for (schema, reason) in [
            (recursive, "#/$defs/Node"),
            (untyped, "untyped"),
            (two_types, "one type"),
            (in_an_option, "untyped"),
        ] {
            // The start-up check refuses exactly what the renderer cannot render.
            let refused = convert(&schema).unwrap_err();
            assert!(refused.to_string().contains(reason), "{refused}");
            assert_eq!(check(&schema), Err(refused));
        }
    }
}
