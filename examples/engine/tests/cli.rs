//! The example engine as a user runs it: each subcommand, as a process.

use std::process::{Command, Output};

use serde_json::Value;

fn engine(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_engine"))
        .args(args)
        .output()
        .expect("the engine runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("UTF-8 output")
}

#[test]
fn tools_lists_plugins_and_tools_with_localized_summaries() {
    let output = engine(&["tools", "--locale", "it-IT"]);
    assert!(output.status.success(), "{output:?}");
    let listing = stdout(&output);
    let lines: Vec<&str> = listing.lines().collect();
    assert_eq!(lines[0], "Acme (acme-crm 0.1.0, engine >=0.1, <2)");
    assert!(
        listing.contains("acme:book_appointment        [crm] Prenota un appuntamento nel CRM."),
        "{listing}"
    );
    assert!(listing.contains("Meteo (weather 0.1.0"), "{listing}");
    assert!(
        listing.contains("weather:weather              [web] Temperature tipiche di una città."),
        "{listing}"
    );
}

#[test]
fn catalog_prints_each_format() {
    for (format, names) in [
        ("openai", "/0/function/name"),
        ("anthropic", "/0/name"),
        ("gemini", "/0/functionDeclarations/0/name"),
        ("mcp", "/tools/0/name"),
    ] {
        let output = engine(&["catalog", "--format", format]);
        assert!(output.status.success(), "{format}: {output:?}");
        let catalog: Value = serde_json::from_str(&stdout(&output)).expect("a JSON catalog");
        assert_eq!(
            catalog.pointer(names),
            Some(&Value::from("acme__book_appointment")),
            "{format}"
        );
    }
    let bad = engine(&["catalog", "--format", "openapi"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("use openai, anthropic, gemini or mcp"));
}

#[test]
fn call_prints_the_output_or_the_models_error() {
    let output = engine(&[
        "call",
        "weather__weather",
        r#"{"city": "Tokyo", "days": 2, "units": "fahrenheit"}"#,
    ]);
    assert!(output.status.success(), "{output:?}");
    let forecast: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(forecast["city"], "Tokyo");
    assert_eq!(forecast["temps"].as_array().unwrap().len(), 2);

    let output = engine(&[
        "call",
        "weather:weather",
        r#"{"city": "Tokyo", "days": "2", "units": null}"#,
    ]);
    assert_eq!(output.status.code(), Some(1));
    let error: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(error["error"]["kind"], "invalid_arguments");
    assert_eq!(
        error["error"]["message"],
        r#"invalid arguments: `days`: invalid type: string "2", expected u8"#
    );
}

#[test]
fn check_reports_what_it_validated() {
    let output = engine(&["check"]);
    assert!(output.status.success(), "{output:?}");
    let report = stdout(&output);
    assert!(
        report.starts_with("ok: 3 plugins, 3 tools, 3 hooks, engine-core 0.1.0\n"),
        "{report}"
    );
    for format in ["openai", "anthropic", "gemini", "mcp"] {
        assert!(report.contains(&format!("catalog {format}")), "{report}");
    }
    for line in [
        "  hooks conversation_start none\n",
        "  hooks message_received   guard:blank_message, acme:order_ids_hint\n",
        "  hooks response_generated guard:dirty_output_guard\n",
        "  hooks response_sent      none\n",
        "  streaming of replies: off: a hook may replace or regenerate replies\n",
    ] {
        assert!(report.contains(line), "`{line}` is missing from:\n{report}");
    }
}

#[test]
fn tools_lists_hooks_by_event_in_the_order_they_run() {
    let output = engine(&["tools", "--locale", "it-IT"]);
    assert!(output.status.success(), "{output:?}");
    let listing = stdout(&output);
    let hooks = listing
        .split_once("Hooks, by event, in the order they run\n")
        .and_then(|(_, rest)| rest.split_once("Agents\n"))
        .map(|(hooks, _)| hooks)
        .unwrap_or_else(|| panic!("no hook section in:\n{listing}"));
    assert_eq!(
        hooks,
        "  conversation_start: none\n\
         \x20 message_received:\n\
         \x20       0  guard:blank_message        Risponde ai messaggi vuoti. (2000 ms)\n\
         \x20     100  acme:order_ids_hint        Spiega gli identificativi Acme quando si parla di ordini. (2000 ms)\n\
         \x20 response_generated:\n\
         \x20      10  guard:dirty_output_guard   Ripete un turno con output corrotto. (2000 ms, mutates the response)\n\
         \x20 response_sent: none\n"
    );
    // Hooks are not tools: none is listed among a plugin's tools.
    let tools = listing.split_once("Hooks, by event").unwrap().0;
    assert!(
        !tools.contains("guard:") && !tools.contains("order_ids_hint"),
        "{tools}"
    );
}
