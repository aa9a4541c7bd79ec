//! What `#[define_tool]` and `plugin!` register, and the type-erased call entry.

mod support;

use futures::executor::block_on;
use plugin_sdk::engine::{CallInput, LocalizedText, ToolAnnotations};
use plugin_sdk::{ToolContext, ToolErrorKind};
use serde_json::{json, Value};

fn call(id: &str, arguments: &str) -> Result<Value, plugin_sdk::ToolError> {
    let context = ToolContext::new();
    let output = block_on(support::tool(id).call(CallInput::new(arguments, &context)))?;
    Ok(serde_json::from_str(&output).expect("the output is JSON"))
}

#[test]
fn every_defined_tool_is_registered_once_with_its_canonical_id() {
    let ids: Vec<String> = support::tools().iter().map(|tool| tool.id()).collect();
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
    let tool = support::tool("acme:book_appointment");
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
    let tool = support::tool("fixtures:flat");
    assert_eq!(tool.summary, None);
    assert_eq!(
        tool.summary_for("it-IT"),
        "Accept the fixture and answer `{\"ok\": true}`."
    );
}

#[test]
fn the_plugin_manifest_comes_from_plugin_and_cargo() {
    let acme = (support::tool("acme:find_orders").plugin)();
    assert_eq!(acme.namespace, "acme");
    assert_eq!(acme.package, "acme-crm");
    assert_eq!(acme.version, "0.1.0");
    assert_eq!(acme.engine, ">=0.1, <2");
    assert_eq!(acme.display_name, Some(LocalizedText::Plain("Acme")));
    assert_eq!(
        acme.description.unwrap().resolve("it"),
        "Stato degli ordini e appuntamenti dal gestionale Acme."
    );
    let weather = (support::tool("weather:weather").plugin)();
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
        missing.message().contains("missing field `date`"),
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
    assert!(
        extra.message().contains("unknown field `surprise`"),
        "{extra}"
    );
}

#[test]
fn output_schemas_describe_the_return_type() {
    let schema = (support::tool("acme:book_appointment").output_schema)().to_value();
    assert_eq!(schema["type"], "object");
    let properties: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
    assert_eq!(properties, ["id", "patient_id", "date", "note"]);
    let list = (support::tool("acme:find_orders").output_schema)().to_value();
    assert_eq!(list["type"], "array");
}
