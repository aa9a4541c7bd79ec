//! A panic, a timeout and a client's cancellation, through a real MCP client, over stdio
//! and streamable HTTP, against an engine that links the fault tools.

use serde_json::{json, Value};
use test_support::mcp::{drive, Transport, BOTH};

const ENGINE: &str = env!("CARGO_BIN_EXE_mcp-faults");

/// The error a failed call's text block carries.
fn error_of(result: &Value) -> Value {
    assert_eq!(result["isError"], true, "{result}");
    serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap()
}

#[test]
fn a_panic_is_an_error_result_without_the_panic_message() {
    for transport in BOTH {
        let report = drive(
            ENGINE,
            &[],
            transport,
            json!([
                { "call": "faults__explode", "arguments": {} },
                { "call": "faults__sleep", "arguments": { "ms": 1 } },
            ]),
        );
        let error = error_of(&report["steps"][0]);
        assert_eq!(error["error"]["kind"], "panicked", "{transport:?}");
        assert!(
            !report.to_string().contains("secret-token-4242"),
            "the panic message reached the client: {report}"
        );
        // The server serves on.
        assert_eq!(
            report["steps"][1]["structuredContent"],
            json!({ "slept_ms": 1 })
        );
    }
}

#[test]
fn a_call_past_the_servers_timeout_is_an_error_result() {
    for transport in BOTH {
        let report = drive(
            ENGINE,
            &["--timeout-ms", "200"],
            transport,
            json!([
                { "call": "faults__sleep", "arguments": { "ms": 60000 } },
                { "call": "faults__stopped_naps", "arguments": {} },
            ]),
        );
        let error = error_of(&report["steps"][0]);
        assert_eq!(error["error"]["kind"], "timed_out", "{transport:?}");
        assert_eq!(
            error["error"]["message"],
            "`faults__sleep` did not finish in time and was stopped"
        );
        assert_eq!(
            report["steps"][1]["structuredContent"],
            json!({ "stopped": 1 })
        );
    }
}

#[test]
fn a_clients_cancellation_stops_the_tool() {
    for transport in BOTH {
        let report = drive(
            ENGINE,
            &[],
            transport,
            json!([
                { "call": "faults__stopped_naps", "arguments": {} },
                { "cancel": "faults__sleep", "arguments": { "ms": 60000 }, "after_ms": 300 },
                // The server's 30 s timeout is far off: only the cancellation can stop it.
                { "poll": "faults__stopped_naps", "arguments": {}, "until": { "stopped": 1 }, "timeout_ms": 10000 },
            ]),
        );
        assert_eq!(
            report["steps"][0]["structuredContent"],
            json!({ "stopped": 0 })
        );
        assert_eq!(report["steps"][1], json!({ "cancelled": true }));
        assert_eq!(
            report["steps"][2]["structuredContent"],
            json!({ "stopped": 1 }),
            "{transport:?}: the nap was not stopped by the cancellation: {report}"
        );
    }
}

#[test]
fn an_image_is_named_by_its_own_package() {
    let version = std::process::Command::new(ENGINE)
        .arg("--version")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&version.stdout),
        "mcp-faults 0.1.0\n"
    );
    let report = drive(ENGINE, &[], Transport::Stdio, json!([]));
    assert_eq!(
        report["server"],
        json!({"name": "mcp-faults", "version": "0.1.0"}),
        "{report}"
    );
}
