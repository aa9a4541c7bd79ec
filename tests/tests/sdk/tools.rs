//! What `#[define_tool]` and `plugin!` register, and the type-erased call entry.

use futures::executor::block_on;
use plugin_sdk::engine::{CallInput, LocalizedText, ToolAnnotations};
use plugin_sdk::prelude::*;
use plugin_sdk::{ToolContext, ToolErrorKind};
use serde_json::{json, Value};

fn call(id: &str, arguments: &str) -> Result<Value, plugin_sdk::ToolError> {
    let context = ToolContext::new();
    let output = block_on(crate::support::tool(id).call(CallInput::new(arguments, &context)))?;
    Ok(serde_json::from_str(&output).expect("the output is JSON"))
}

#[test]
fn every_defined_tool_is_registered_once_with_its_canonical_id() {
    let ids: Vec<String> = crate::support::tools()
        .iter()
        .map(|tool| tool.id())
        .collect();
    assert_eq!(
        ids,
        [
            "acme:book_appointment",
            "acme:contact_card",
            "acme:find_orders",
            "fixtures:collections",
            "fixtures:enums",
            "fixtures:flat",
            "fixtures:nested",
            "fixtures:no_arguments",
            "fixtures:optionals",
            "fixtures:page_of_addresses",
            "fixtures:tree",
            "weather:weather",
        ]
    );
}

#[test]
fn the_descriptor_carries_texts_annotations_and_examples() {
    let tool = crate::support::tool("acme:book_appointment");
    assert_eq!(tool.name, "book_appointment");
    assert!(tool
        .description
        .starts_with("Book an appointment in the CRM for a patient on a day."));
    assert_eq!(
        tool.summary_for("it-IT"),
        "Prenota un appuntamento nel CRM."
    );
    assert_eq!(
        tool.summary_for("fr-FR"),
        "Books an appointment in the CRM."
    );
    assert_eq!(tool.category, Some("crm"));
    assert_eq!(
        tool.annotations,
        ToolAnnotations {
            idempotent: Some(true),
            ..ToolAnnotations::default()
        }
    );
    assert!(tool.strict);
    assert_eq!(
        tool.examples,
        [
            r#"{"patient_id":"p-1042","date":"2026-12-01","note":null}"#,
            r#"{"patient_id":"p-7","date":"2027-01-15","note":"Needs a wheelchair ramp."}"#,
        ]
    );
    assert!(
        tool.location.file.ends_with("acme-crm/src/lib.rs"),
        "{:?}",
        tool.location
    );
}

#[test]
fn a_tool_without_summary_shows_the_first_line_of_its_description() {
    let tool = crate::support::tool("fixtures:flat");
    assert_eq!(tool.summary, None);
    assert_eq!(
        tool.summary_for("it-IT"),
        "Accept the fixture and answer `{\"ok\": true}`."
    );
}

#[test]
fn the_plugin_manifest_comes_from_plugin_and_cargo() {
    let acme = (crate::support::tool("acme:find_orders").plugin)();
    assert_eq!(acme.namespace, "acme");
    assert_eq!(acme.package, "acme-crm");
    assert_eq!(acme.version, "0.1.0");
    assert_eq!(acme.engine, ">=0.1, <2");
    assert_eq!(acme.display_name, Some(LocalizedText::Plain("Acme")));
    assert_eq!(
        acme.description.unwrap().resolve("it"),
        "Stato degli ordini e appuntamenti dal gestionale Acme."
    );
    let weather = (crate::support::tool("weather:weather").plugin)();
    assert_eq!(
        weather.namespace, "weather",
        "the namespace defaults to the package name"
    );
    let linked: Vec<&str> = plugin_sdk::engine::linked_plugins()
        .map(|plugin| plugin.namespace)
        .collect();
    for namespace in ["acme", "fixtures", "weather"] {
        assert_eq!(
            linked.iter().filter(|n| **n == namespace).count(),
            1,
            "{linked:?}"
        );
    }
}

#[test]
fn the_call_entry_turns_json_arguments_into_json_output() {
    let booked = call(
        "acme:book_appointment",
        r#"{"patient_id":"p-1","date":"2026-12-01","note":"first visit"}"#,
    )
    .unwrap();
    assert_eq!(
        booked,
        json!({"id": "bk-p-1-20261201", "patient_id": "p-1", "date": "2026-12-01", "note": "first visit"})
    );
    let orders = call(
        "acme:find_orders",
        r#"{"customer_id":"c-12","state":"returned"}"#,
    )
    .unwrap();
    assert_eq!(orders, json!([{"order_id": "o-1003", "state": "returned"}]));
}

#[test]
fn bad_arguments_are_model_readable_errors_naming_the_problem() {
    let missing = call(
        "acme:book_appointment",
        r#"{"patient_id":"p-1","note":null}"#,
    )
    .unwrap_err();
    assert_eq!(missing.kind(), ToolErrorKind::InvalidArguments);
    assert!(
        missing
            .message()
            .starts_with("invalid arguments: missing key `date`: "),
        "{missing}"
    );
    let wrong_type = call(
        "weather:weather",
        r#"{"city":"Rome","days":"three","units":null}"#,
    )
    .unwrap_err();
    assert!(wrong_type.message().contains("expected u8"), "{wrong_type}");
    let malformed = call("weather:weather", r#"{"city":"Rome""#).unwrap_err();
    assert_eq!(malformed.kind(), ToolErrorKind::InvalidArguments);
}

#[test]
fn a_tool_error_from_the_body_keeps_its_kind_and_message() {
    let error = call(
        "weather:weather",
        r#"{"city":"Atlantis","days":1,"units":null}"#,
    )
    .unwrap_err();
    assert_eq!(error.kind(), ToolErrorKind::InvalidArguments);
    assert!(
        error.message().starts_with("unknown city `Atlantis`"),
        "{error}"
    );
}

#[test]
fn a_tool_without_arguments_accepts_an_empty_object_or_null_and_nothing_else() {
    assert_eq!(
        call("fixtures:no_arguments", "{}").unwrap(),
        json!({"ok": true})
    );
    assert_eq!(
        call("fixtures:no_arguments", "null").unwrap(),
        json!({"ok": true})
    );
    let extra = call("fixtures:no_arguments", r#"{"surprise":1}"#).unwrap_err();
    assert_eq!(
        extra.message(),
        "invalid arguments: unknown key `surprise` (the object takes no keys); the schema allows no other keys"
    );
}

#[test]
fn output_schemas_describe_the_return_type() {
    let schema = (crate::support::tool("acme:book_appointment").output_schema)().to_value();
    assert_eq!(schema["type"], "object");
    let properties: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
    assert_eq!(properties, ["id", "patient_id", "date", "note"]);
    let list = (crate::support::tool("acme:find_orders").output_schema)().to_value();
    assert_eq!(list["type"], "array");
}

/// Arguments every fixture accepts, with an object at each level its schema has one: a
/// struct in a struct, in a list, in an `Option`, in a `Box`, in both kinds of enum, in a
/// generic type and in a type that contains itself.
const ACCEPTED: &[(&str, &str)] = &[
    (
        "fixtures:nested",
        r#"{"delivery": {"street": "Via Roma 1", "city": "Rome"}, "previous": [{"street": "Rue 2", "city": "Paris"}]}"#,
    ),
    (
        "fixtures:enums",
        r#"{"priority": "low", "action": {"assign": {"assignee": "ann", "priority": "urgent"}}, "tagged": {"kind": "close", "reason": "done"}}"#,
    ),
    (
        "fixtures:enums",
        r#"{"priority": "urgent", "action": {"close": {"reason": "r"}}, "tagged": {"kind": "hand", "who": {"street": "s", "city": "c"}}}"#,
    ),
    (
        "fixtures:enums",
        r#"{"priority": "normal", "action": "reopen", "tagged": {"kind": "reopen"}}"#,
    ),
    (
        "fixtures:optionals",
        r#"{"nickname": null, "age": 7, "address": {"street": "s", "city": "c"}, "priority": null, "tags": ["a", null]}"#,
    ),
    (
        "fixtures:collections",
        r#"{"numbers": [1.5], "matrix": [[1]], "boxed": {"street": "s", "city": "c"}, "actions": [{"close": {"reason": "r"}}, "reopen"]}"#,
    ),
    (
        "fixtures:tree",
        r#"{"label": "a", "children": [{"label": "b", "children": [], "parent": null}], "parent": {"label": "p", "children": [], "parent": null}}"#,
    ),
    (
        "fixtures:page_of_addresses",
        r#"{"items": [{"street": "s", "city": "c"}], "cursor": null}"#,
    ),
];

/// Every object in `value` with its path as the engine names it (`a.b`, `a[0]`).
fn objects(value: &Value, path: String, found: &mut Vec<String>) {
    let join = |key: &str| match path.as_str() {
        "" => key.to_owned(),
        _ => format!("{path}.{key}"),
    };
    match value {
        Value::Object(members) => {
            for (key, member) in members {
                objects(member, join(key), found);
            }
            found.push(path);
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                objects(item, format!("{path}[{index}]"), found);
            }
        }
        _ => {}
    }
}

/// The object at `path` in `value`.
fn object_at<'v>(value: &'v mut Value, path: &str) -> &'v mut serde_json::Map<String, Value> {
    let pointer: String = path
        .split(['.', '['])
        .filter(|step| !step.is_empty())
        .map(|step| format!("/{}", step.trim_end_matches(']')))
        .collect();
    value
        .pointer_mut(&pointer)
        .and_then(Value::as_object_mut)
        .expect("an object")
}

#[test]
fn dispatch_refuses_what_the_schema_forbids_at_every_object_of_every_fixture() {
    for (tool, accepted) in ACCEPTED {
        call(tool, accepted).unwrap_or_else(|error| panic!("{tool} refused {accepted}: {error}"));
        let accepted: Value = serde_json::from_str(accepted).unwrap();
        let mut paths = Vec::new();
        objects(&accepted, String::new(), &mut paths);
        for path in paths {
            let key = |name: &str| {
                if path.is_empty() {
                    name.to_owned()
                } else {
                    format!("{path}.{name}")
                }
            };
            // A key the schema does not have.
            let mut extra = accepted.clone();
            object_at(&mut extra, &path).insert("zz_unknown".into(), json!(1));
            let error = call(tool, &extra.to_string()).expect_err(&format!("{tool}: {extra}"));
            assert_eq!(error.kind(), ToolErrorKind::InvalidArguments, "{error}");
            let unknown = format!("unknown key `{}`", key("zz_unknown"));
            let members: Vec<String> = object_at(&mut accepted.clone(), &path)
                .keys()
                .cloned()
                .collect();
            // An externally tagged enum's object (the fixtures' `Action`) holds one key,
            // the variant: without it, no key is missing but a variant is.
            let variant = ["action", "actions[0]"].contains(&path.as_str());
            assert!(
                error.message().contains(&unknown),
                "{tool}, unknown key at `{path}`: {error}"
            );
            // Each key it has, left out.
            for member in members {
                let mut missing = accepted.clone();
                object_at(&mut missing, &path).remove(&member);
                let error =
                    call(tool, &missing.to_string()).expect_err(&format!("{tool}: {missing}"));
                assert_eq!(error.kind(), ToolErrorKind::InvalidArguments, "{error}");
                let named = format!("missing key `{}`", key(&member));
                let expected = match variant {
                    true => {
                        format!("invalid arguments: `{path}`: not the shape the schema gives here")
                    }
                    false => named,
                };
                assert!(
                    error.message().contains(&expected),
                    "{tool}, `{member}` left out at `{path}`: {error}"
                );
            }
        }
    }
}

/// The `fixtures:enums` arguments with `action` and `tagged` as given.
fn enums(action: &str, tagged: &str) -> Result<Value, plugin_sdk::ToolError> {
    let arguments = format!(r#"{{"priority": "low", "action": {action}, "tagged": {tagged}}}"#);
    call("fixtures:enums", &arguments)
}

/// The message of the error `result` must be.
fn refused(result: Result<Value, plugin_sdk::ToolError>) -> String {
    let error = result.expect_err("the arguments must be refused");
    assert_eq!(error.kind(), ToolErrorKind::InvalidArguments, "{error}");
    error.message().to_owned()
}

const CLOSE: &str = r#"{"close": {"reason": "r"}}"#;

#[test]
fn an_internally_tagged_unit_variant_refuses_keys_beside_its_tag() {
    assert!(enums(CLOSE, r#"{"kind": "reopen"}"#).is_ok());
    let message = refused(enums(CLOSE, r#"{"kind": "reopen", "zz": 1}"#));
    assert!(message.contains("unknown key `tagged.zz`"), "{message}");
}

#[test]
fn errors_name_the_authors_type() {
    let message = refused(call(
        "fixtures:nested",
        r#"{"delivery": "Rome", "previous": []}"#,
    ));
    assert_eq!(
        message,
        r#"invalid arguments: `delivery`: invalid type: string "Rome", expected struct Address"#
    );
}

#[test]
fn errors_inside_an_internally_tagged_enum_name_their_path_inside_it() {
    let message = refused(enums(
        CLOSE,
        r#"{"kind": "close", "reason": "r", "tagged": 1}"#,
    ));
    assert!(message.contains("unknown key `tagged.tagged`"), "{message}");
    let message = refused(enums(
        CLOSE,
        r#"{"kind": "hand", "who": {"street": "s", "city": "c", "zz": 1}}"#,
    ));
    assert!(message.contains("unknown key `tagged.who.zz`"), "{message}");
    let message = refused(enums(CLOSE, r#"{"kind": "hand", "who": {"street": "s"}}"#));
    assert!(
        message.contains("missing key `tagged.who.city`"),
        "{message}"
    );
    let message = refused(enums(
        CLOSE,
        r#"{"kind": "hand", "who": {"street": "s", "city": 7}}"#,
    ));
    assert!(
        message.starts_with("invalid arguments: `tagged.who.city`: invalid type: integer `7`"),
        "{message}"
    );
}

#[test]
fn a_struct_sent_as_an_array_is_refused() {
    // serde reads a struct from an array by position; the schema says object.
    let message = refused(call(
        "fixtures:nested",
        r#"{"delivery": ["s", "c"], "previous": []}"#,
    ));
    assert!(
        message.starts_with(
            "invalid arguments: `delivery`: invalid type: array, expected struct Address"
        ),
        "{message}"
    );
    // An empty array, which serde_json has left when the struct refuses it.
    let message = refused(call(
        "fixtures:nested",
        r#"{"delivery": [], "previous": []}"#,
    ));
    assert!(
        message.starts_with("invalid arguments: `delivery`: invalid type: array"),
        "{message}"
    );
    // An array where a value is due keeps its path: it is not a struct's refusal.
    let message = refused(call(
        "fixtures:collections",
        r#"{"numbers": [], "matrix": [[[1]]], "boxed": {"street": "s", "city": "c"}, "actions": []}"#,
    ));
    assert!(
        message.starts_with("invalid arguments: `matrix[0][0]`: invalid type: sequence"),
        "{message}"
    );
}

#[test]
fn an_unknown_key_beside_an_externally_tagged_variant_is_named() {
    let message = refused(enums(
        r#"{"assign": {"assignee": "ann", "priority": "low"}, "zz_unknown": 1}"#,
        r#"{"kind": "reopen"}"#,
    ));
    assert!(
        message.contains("unknown key `action.zz_unknown`"),
        "{message}"
    );
}

#[test]
fn a_key_written_with_escapes_is_named_as_it_reads() {
    let message = refused(call(
        "fixtures:nested",
        r#"{"delivery": {"street": "s", "city": "c", "z\"z\u0041": 1}, "previous": []}"#,
    ));
    assert!(
        message.contains("unknown key `delivery.z\"zA`"),
        "{message}"
    );
}

#[test]
fn a_duplicate_key_is_refused_in_structs_and_in_internally_tagged_enums() {
    let message = refused(call(
        "fixtures:nested",
        r#"{"delivery": {"street": "s", "city": "c", "city": "d"}, "previous": []}"#,
    ));
    assert!(message.contains("duplicate field `city`"), "{message}");
    let message = refused(enums(
        CLOSE,
        r#"{"kind": "close", "reason": "a", "reason": "b"}"#,
    ));
    assert!(message.contains("duplicate"), "{message}");
    assert!(message.contains("reason"), "{message}");
}

/// Strict arguments read as dispatch reads them, for types that need no tool of their own.
fn read<T: plugin_sdk::StrictSchema>(arguments: &str) -> Result<T, plugin_sdk::ToolError> {
    plugin_sdk::__private::deserialize_strict_arguments::<T>(arguments)
}

/// The message of the error reading `arguments` as `T` must give.
fn read_refused<T: plugin_sdk::StrictSchema>(arguments: &str) -> String {
    refused(read::<T>(arguments).map(|_| Value::Null))
}

/// An adjacently tagged enum: serde reads it as a struct of two keys, `t` and `c`.
#[derive(Deserialize, JsonSchema, ToolArgs)]
#[serde(tag = "t", content = "c")]
enum Step {
    Stop,
    Go { speed: u32 },
}

#[derive(Deserialize, JsonSchema, ToolArgs)]
struct Stepping {
    step: Step,
}

#[test]
fn an_adjacently_tagged_unit_variant_is_sent_without_content() {
    let stepping = read::<Stepping>(r#"{"step": {"t": "Stop"}}"#).expect("the schema allows it");
    assert!(matches!(stepping.step, Step::Stop));
    let go = read::<Stepping>(r#"{"step": {"t": "Go", "c": {"speed": 3}}}"#).expect("valid");
    assert!(matches!(go.step, Step::Go { speed: 3 }));
    let message = read_refused::<Stepping>(r#"{"step": {"t": "Go"}}"#);
    assert!(message.contains("missing key `step.c`"), "{message}");
    let message = read_refused::<Stepping>(r#"{"step": {"t": "Go", "c": {"speed": 3, "zz": 1}}}"#);
    assert!(message.contains("unknown key `step.c.zz`"), "{message}");
    let message = read_refused::<Stepping>(r#"{"step": {"t": "Stop", "zz": 1}}"#);
    assert!(message.contains("unknown key `step.zz`"), "{message}");
}

/// A filter that contains itself, internally tagged, under a name schemars
/// percent-encodes in its reference (`#/$defs/Search%20filter`).
#[derive(Deserialize, JsonSchema, ToolArgs)]
#[serde(tag = "op", rename_all = "snake_case", rename = "Search filter")]
enum Filter {
    Field { name: String, equals: String },
    Not { filter: Box<Filter> },
}

#[derive(Deserialize, JsonSchema, ToolArgs)]
struct Search {
    filter: Filter,
}

/// `{"filter": ...}` with `depth` `not`s around a field filter whose object is `leaf`.
fn nested_filter(depth: usize, leaf: &str) -> String {
    let mut filter = leaf.to_owned();
    for _ in 0..depth {
        filter = format!(r#"{{"op": "not", "filter": {filter}}}"#);
    }
    format!(r#"{{"filter": {filter}}}"#)
}

#[test]
fn a_deeply_nested_tagged_argument_is_checked_without_exponential_blowup() {
    // Each level is a choice among the variants: checking each choice twice would take
    // 2^100 steps here (a hang, which nextest fails at its time limit).
    let leaf = r#"{"op": "field", "name": "a", "equals": "b"}"#;
    let search = read::<Search>(&nested_filter(100, leaf)).expect("the schema allows it");
    let (mut filter, mut depth) = (&search.filter, 0);
    while let Filter::Not { filter: inner } = filter {
        (filter, depth) = (inner, depth + 1);
    }
    assert_eq!(depth, 100);
    assert!(matches!(filter, Filter::Field { name, equals } if name == "a" && equals == "b"));
    let bad_leaf = r#"{"op": "field", "name": "a", "equals": "b", "zz": 1}"#;
    let message = read_refused::<Search>(&nested_filter(100, bad_leaf));
    let path = format!("filter.{}zz", "filter.".repeat(100));
    assert!(
        message.contains(&format!("unknown key `{path}`")),
        "{message}"
    );
}

/// Two variants that share the recursive key: a walk of the one that does not fit
/// reaches its tag only after the key, when the call sends the key first.
#[derive(Deserialize, JsonSchema, ToolArgs)]
#[serde(tag = "op", rename_all = "snake_case")]
enum Twin {
    Leaf { v: u8 },
    Not { filter: Box<Twin> },
    Maybe { filter: Box<Twin>, flag: bool },
}

#[derive(Deserialize, JsonSchema, ToolArgs)]
struct Twins {
    filter: Twin,
}

#[test]
fn variants_that_share_a_recursive_key_are_checked_without_exponential_blowup() {
    // 40 levels, `maybe` and `not` in turn, the key first and the tag last.
    let nested = |leaf: &str| {
        let mut filter = leaf.to_owned();
        for level in 0..40 {
            filter = match level % 2 {
                0 => format!(r#"{{"filter": {filter}, "flag": true, "op": "maybe"}}"#),
                _ => format!(r#"{{"filter": {filter}, "op": "not"}}"#),
            };
        }
        format!(r#"{{"filter": {filter}}}"#)
    };
    let twins = read::<Twins>(&nested(r#"{"op": "leaf", "v": 7}"#)).expect("valid");
    let (mut twin, mut levels) = (&twins.filter, 0);
    loop {
        twin = match twin {
            Twin::Maybe { filter, flag } if *flag => filter,
            Twin::Not { filter } => filter,
            Twin::Leaf { v } => {
                assert_eq!(*v, 7);
                break;
            }
            Twin::Maybe { .. } => panic!("a flag read as false"),
        };
        levels += 1;
    }
    assert_eq!(levels, 40);
    let message = read_refused::<Twins>(&nested(r#"{"op": "leaf", "v": 1, "zz": 1}"#));
    let path = format!("filter.{}zz", "filter.".repeat(40));
    assert!(
        message.contains(&format!("unknown key `{path}`")),
        "{message}"
    );
}

#[test]
fn a_reference_to_a_percent_encoded_name_is_followed() {
    // The inner filter is reached through `#/$defs/Search%20filter`.
    let schema = plugin_sdk::__private::input_schema_for::<Search>(true);
    assert!(
        schema
            .as_value()
            .to_string()
            .contains("#/$defs/Search%20filter"),
        "{}",
        schema.as_value()
    );
    let bad_leaf = r#"{"op": "field", "name": "a", "equals": "b", "zz": 1}"#;
    let message = read_refused::<Search>(&nested_filter(2, bad_leaf));
    assert!(
        message.contains("unknown key `filter.filter.filter.zz`"),
        "{message}"
    );
}
