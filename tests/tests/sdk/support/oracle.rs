//! The OpenAI Agents SDK's strict-schema check, run in Python (`tests/oracle`).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

/// Runs the oracle on `(id, schema)` pairs and returns its verdicts, one per pair in the
/// same order (checked: an empty or short answer fails here, not as a loop that ran zero
/// times).
pub fn oracle(schemas: &[(String, Value)]) -> Vec<Value> {
    let input: Vec<Value> = schemas
        .iter()
        .map(|(id, schema)| json!({ "id": id, "schema": schema }))
        .collect();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("oracle/strict_check.py");
    let mut child = Command::new(test_support::python(
        "the oracle needs Python with openai-agents",
    ))
    .arg(script)
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .spawn()
    .expect("start the oracle");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(Value::Array(input).to_string().as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "the oracle failed");
    let verdicts: Vec<Value> =
        serde_json::from_slice(&output.stdout).expect("the oracle's verdicts");
    let judged: Vec<&str> = verdicts
        .iter()
        .map(|verdict| verdict["id"].as_str().expect("a verdict names its schema"))
        .collect();
    let sent: Vec<&str> = schemas.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(
        judged, sent,
        "the oracle judged other schemas than it was sent"
    );
    verdicts
}
