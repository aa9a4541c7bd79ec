//! The strict-mode check: every reason a schema would be refused in strict mode, with a
//! JSON pointer and the fix.

use std::fmt::Write;

use serde_json::{Map, Value};

use super::{types, LIST_OF_SUBSCHEMAS, MAP_OF_SUBSCHEMAS, SINGLE_SUBSCHEMA};

/// One way a schema breaks strict mode, with where and what to do instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// JSON pointer to the offending subschema (`""` is the root).
    pub pointer: String,
    /// What is wrong and what to write instead.
    pub message: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = if self.pointer.is_empty() {
            "the root"
        } else {
            &self.pointer
        };
        write!(f, "at {at}: {}", self.message)
    }
}

/// Keywords strict mode rejects, each with the fix.
const FORBIDDEN: &[(&str, &str)] = &[
    ("oneOf", "`oneOf` is not accepted: use `anyOf`"),
    ("allOf", "`allOf` is not accepted: write the merged object out"),
    ("not", "`not` is not accepted: check the value in the tool body"),
    ("if", "`if`/`then`/`else` are not accepted: check the value in the tool body"),
    ("then", "`if`/`then`/`else` are not accepted: check the value in the tool body"),
    ("else", "`if`/`then`/`else` are not accepted: check the value in the tool body"),
    ("default", "`default` is not accepted: make the field nullable and apply the default in the tool body"),
    ("format", "string `format`s are not accepted everywhere: take a plain string and validate it in the tool body"),
    ("patternProperties", "`patternProperties` make an open object: list the properties"),
    ("prefixItems", "tuples are not accepted: use an object with named fields"),
];

/// Every way `schema` breaks strict mode, each with its JSON pointer. Empty when the
/// schema is strict. The engine runs this at start-up for every strict tool.
pub fn check_strict(schema: &Value) -> Vec<Violation> {
    let mut violations = Vec::new();
    let root_is_object = schema
        .as_object()
        .is_some_and(|node| types(node).eq(["object"]) && !node.contains_key("anyOf"));
    if !root_is_object {
        violations.push(Violation {
            pointer: String::new(),
            message: "the root must be a plain object (`\"type\": \"object\"`): make the arguments a struct with named fields".into(),
        });
    }
    check_node(schema, &mut String::new(), &mut violations);
    violations
}

fn check_node(value: &Value, pointer: &mut String, out: &mut Vec<Violation>) {
    let Value::Object(node) = value else {
        return out.push(at(
            pointer,
            "a boolean schema is not accepted: describe the value with a type",
        ));
    };
    // One pass over the node's few keys picks out what the checks read: a hashed look-up
    // per keyword would cost more than the whole pass (start-up checks every tool).
    let mut keywords = Keywords::default();
    for (key, child) in node {
        match key.as_str() {
            "$ref" => keywords.reference = Some(child),
            "type" => keywords.typed_object = names_object(child),
            "properties" => {
                // Whatever they hold: the node is an object, held to an object's rules.
                keywords.has_properties = true;
                keywords.properties = child.as_object();
            }
            "required" => keywords.required = child.as_array(),
            "additionalProperties" => keywords.closed = *child == Value::Bool(false),
            key => {
                if let Some((_, fix)) = FORBIDDEN.iter().find(|(keyword, _)| key == *keyword) {
                    out.push(at(pointer, fix));
                }
            }
        }
    }
    if let Some(reference) = keywords.reference {
        if node.len() > 1 {
            out.push(at(
                pointer,
                "a `$ref` must have no sibling keywords: wrap it as `anyOf: [{\"$ref\": ...}]`",
            ));
        }
        if !reference
            .as_str()
            .is_some_and(|r| r == "#" || r.starts_with("#/$defs/"))
        {
            out.push(at(
                pointer,
                "a `$ref` must point into this schema's `$defs`",
            ));
        }
    }
    if keywords.typed_object || keywords.has_properties {
        check_object(&keywords, pointer, out);
    }
    for (key, child) in node {
        let key = key.as_str();
        match child {
            Value::Object(_)
                if SINGLE_SUBSCHEMA.contains(&key) && key != "additionalProperties" =>
            {
                visit(pointer, &[key], child, out)
            }
            Value::Array(list) if LIST_OF_SUBSCHEMAS.contains(&key) => {
                for (index, item) in list.iter().enumerate() {
                    let length = pointer.len();
                    push_segment(pointer, key);
                    // Written in place: an index needs no escaping, nor a string of its own.
                    let _ = write!(pointer, "/{index}");
                    check_node(item, pointer, out);
                    pointer.truncate(length);
                }
            }
            Value::Object(map) if MAP_OF_SUBSCHEMAS.contains(&key) => {
                for (name, item) in map {
                    visit(pointer, &[key, name], item, out);
                }
            }
            _ => {}
        }
    }
}

/// What the checks of one node read, picked out in one pass over its keys.
#[derive(Default)]
struct Keywords<'a> {
    reference: Option<&'a Value>,
    /// `type` is or lists `object`.
    typed_object: bool,
    has_properties: bool,
    properties: Option<&'a Map<String, Value>>,
    required: Option<&'a Vec<Value>>,
    /// `additionalProperties` is `false`.
    closed: bool,
}

/// Whether a `type` keyword, one name or a list, names `object`.
fn names_object(types: &Value) -> bool {
    match types {
        Value::Array(list) => list.iter().any(|name| name == "object"),
        name => name == "object",
    }
}

/// Checks `child`, found at `pointer` followed by `segments`.
fn visit(pointer: &mut String, segments: &[&str], child: &Value, out: &mut Vec<Violation>) {
    let length = pointer.len();
    for segment in segments {
        push_segment(pointer, segment);
    }
    check_node(child, pointer, out);
    pointer.truncate(length);
}

/// Appends `/segment` to `pointer`, escaped per RFC 6901.
fn push_segment(pointer: &mut String, segment: &str) {
    pointer.push('/');
    if segment.contains(['~', '/']) {
        pointer.push_str(&segment.replace('~', "~0").replace('/', "~1"));
    } else {
        pointer.push_str(segment);
    }
}

fn check_object(keywords: &Keywords<'_>, pointer: &str, out: &mut Vec<Violation>) {
    if !keywords.closed {
        out.push(at(pointer, "every object must be closed with `\"additionalProperties\": false`: maps and open objects are not accepted; list the properties in a struct"));
    }
    let required = keywords.required.map(Vec::as_slice).unwrap_or_default();
    for name in keywords.properties.into_iter().flat_map(Map::keys) {
        if !required.iter().any(|listed| listed == name.as_str()) {
            out.push(at(pointer, &format!("property `{name}` must be listed in `required`: make an optional field nullable (`Option<T>`) instead of omittable")));
        }
    }
}

fn at(pointer: &str, message: &str) -> Violation {
    Violation {
        pointer: pointer.to_owned(),
        message: message.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::check_strict;
    use crate::schema::make_canonical;
    use serde_json::json;

    fn pointers(schema: serde_json::Value) -> Vec<(String, String)> {
        check_strict(&schema)
            .into_iter()
            .map(|v| (v.pointer, v.message))
            .collect()
    }

    #[test]
    fn a_canonical_schema_has_no_violation() {
        let schema = json!({
            "type": "object",
            "properties": { "a": { "type": ["string", "null"] } },
            "required": ["a"],
            "additionalProperties": false,
        });
        assert_eq!(pointers(schema), []);
    }

    #[test]
    fn every_violation_is_reported_with_its_pointer() {
        let schema = json!({
            "type": "object",
            "properties": {
                "open": { "type": "object", "additionalProperties": { "type": "string" } },
                "when": { "type": "string", "format": "date-time" },
                "choice": { "oneOf": [{ "type": "string" }, { "type": "integer", "default": 1 }] },
                "a/b": { "$ref": "#/$defs/X", "description": "x" },
            },
            "required": ["open", "when", "choice"],
            "additionalProperties": false,
            "$defs": { "X": { "type": "object", "properties": {} } },
        });
        let found: Vec<String> = pointers(schema)
            .into_iter()
            .map(|(pointer, _)| pointer)
            .collect();
        assert_eq!(
            found,
            [
                "",
                "/properties/open",
                "/properties/when",
                "/properties/choice",
                "/properties/choice/oneOf/1",
                "/properties/a~1b",
                "/$defs/X",
            ]
        );
    }

    #[test]
    fn violations_say_the_fix() {
        let omittable = json!({
            "type": "object",
            "properties": { "note": { "type": "string" } },
            "required": [],
            "additionalProperties": false,
        });
        let messages = pointers(omittable);
        assert_eq!(messages.len(), 1);
        assert!(
            messages[0]
                .1
                .contains("make an optional field nullable (`Option<T>`)"),
            "{messages:?}"
        );
    }

    #[test]
    fn a_node_with_properties_is_held_to_an_objects_rules_whatever_they_hold() {
        // An external tool's schema is written by hand: `properties` that are not an
        // object still make the node an object, which must be closed.
        let schema = json!({
            "type": "object",
            "properties": { "p": { "type": "string", "properties": null } },
            "required": ["p"],
            "additionalProperties": false,
        });
        let found = pointers(schema);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, "/properties/p");
        assert!(found[0].1.contains("must be closed"), "{found:?}");
    }

    #[test]
    fn the_root_must_be_a_plain_object() {
        let found = pointers(json!({ "type": "string" }));
        assert_eq!(found[0].0, "");
        assert!(found[0].1.contains("struct with named fields"));
    }

    #[test]
    fn canonicalizing_closes_objects_and_rewrites_what_providers_reject() {
        let mut schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "n": { "type": "integer", "format": "uint8", "default": 3 },
                "e": { "oneOf": [{ "const": "a" }], "title": "Short", "description": "Long." },
                "r": { "$ref": "#", "description": "Self." },
            },
        });
        make_canonical(&mut schema, true);
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {
                    "n": { "type": "integer" },
                    "e": { "anyOf": [{ "const": "a" }], "description": "Short\n\nLong." },
                    "r": { "anyOf": [{ "$ref": "#" }], "description": "Self." },
                },
                "additionalProperties": false,
                "required": ["n", "e", "r"],
            })
        );
        let once = schema.clone();
        make_canonical(&mut schema, true);
        assert_eq!(schema, once, "canonicalizing twice changes nothing");
    }
}
