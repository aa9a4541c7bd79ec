//! The canonical form: what schemars produces, rewritten into the form every provider
//! accepts in strict mode.

use serde_json::{Map, Value};

use super::{is_object, types, LIST_OF_SUBSCHEMAS, MAP_OF_SUBSCHEMAS, SINGLE_SUBSCHEMA};

/// Rewrites a schema (and every subschema) into the canonical form:
///
/// - `oneOf` becomes `anyOf`; `default` and `$schema` go; numeric `format`s (`int32`,
///   `uint8`, ...) go, since strict mode has no numeric formats;
/// - a `title` that schemars split from a doc comment joins the `description`;
/// - a `$ref` with siblings becomes `anyOf: [{"$ref": ...}]` beside them;
/// - with `strict`, every object is closed (`additionalProperties: false`, unless a
///   schema is already there) and lists every property in `required`.
///
/// Applying it twice changes nothing.
pub fn make_canonical(value: &mut Value, strict: bool) {
    let Value::Object(node) = value else { return };
    take(node, "$schema");
    take(node, "default");
    join_title_into_description(node);
    if let Some(one_of) = take(node, "oneOf") {
        match node.get_mut("anyOf") {
            Some(Value::Array(any_of)) => any_of.extend(as_array(one_of)),
            _ => {
                node.insert("anyOf".into(), one_of);
            }
        }
    }
    if is_numeric(node) {
        take(node, "format");
    }
    if node.len() > 1 {
        if let Some(target) = take(node, "$ref") {
            let reference = Value::Object(Map::from_iter([("$ref".to_owned(), target)]));
            node.insert("anyOf".into(), Value::Array(vec![reference]));
        }
    }
    if strict && is_object(node) {
        node.entry("additionalProperties")
            .or_insert(Value::Bool(false));
        let keys: Vec<Value> = match node.get("properties") {
            Some(Value::Object(properties)) => {
                properties.keys().cloned().map(Value::String).collect()
            }
            _ => Vec::new(),
        };
        node.entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        node.insert("required".into(), Value::Array(keys));
    }
    for child in subschemas_mut(node) {
        make_canonical(child, strict);
    }
}

/// Removes `key` if present. A schema node has a handful of keys: scanning them is
/// cheaper than hashing `key` with serde_json's SipHash-keyed map, and this runs for
/// every node of every tool at start-up.
fn take(node: &mut Map<String, Value>, key: &str) -> Option<Value> {
    if node.keys().any(|present| present == key) {
        node.remove(key)
    } else {
        None
    }
}

fn join_title_into_description(node: &mut Map<String, Value>) {
    let Some(Value::String(title)) = take(node, "title") else {
        return;
    };
    let description = match node.get("description") {
        Some(Value::String(rest)) => format!("{title}\n\n{rest}"),
        _ => title,
    };
    node.insert("description".into(), Value::String(description));
}

fn as_array(value: Value) -> Vec<Value> {
    match value {
        Value::Array(items) => items,
        other => vec![other],
    }
}

fn is_numeric(node: &Map<String, Value>) -> bool {
    types(node).any(|t| t == "integer" || t == "number")
}

/// The subschemas of a node, to rewrite each.
fn subschemas_mut(node: &mut Map<String, Value>) -> Vec<&mut Value> {
    let mut children = Vec::new();
    for (key, value) in node.iter_mut() {
        let key = key.as_str();
        match value {
            Value::Object(_) if SINGLE_SUBSCHEMA.contains(&key) => children.push(value),
            Value::Array(list) if LIST_OF_SUBSCHEMAS.contains(&key) => {
                children.extend(list.iter_mut())
            }
            Value::Object(map) if MAP_OF_SUBSCHEMAS.contains(&key) => {
                children.extend(map.values_mut())
            }
            _ => {}
        }
    }
    children
}
