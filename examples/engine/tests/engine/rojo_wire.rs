//! Seed 002's chat wire on the turn route (`?wire=rojo`), read by a client written to
//! the seed (tests/clients/rojo_chat.py): the seed's example turn, consumed unchanged.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::turn_setup::{send, serve, Setup};
use serde_json::{json, Value};
use test_support::llmock::Llmock;

/// Runs the seed's client against the turn route of `authority` with `body`: what it
/// printed, or its failure.
fn rojo_client(authority: &str, query: &str, body: &Value) -> Result<Value, String> {
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/clients/rojo_chat.py");
    let mut client = Command::new(test_support::python(
        "the seed 002 client runs on the test venv's Python",
    ))
    .arg(script)
    .arg(format!("http://{authority}/v1/agents/bot/turns{query}"))
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("the client starts");
    client
        .stdin
        .take()
        .unwrap()
        .write_all(body.to_string().as_bytes())
        .unwrap();
    let output = client.wait_with_output().unwrap();
    if output.status.success() {
        Ok(serde_json::from_slice(&output.stdout).expect("the client prints JSON"))
    } else {
        Err(String::from_utf8_lossy(&output.stderr).into_owned())
    }
}

#[test]
fn a_client_written_to_seed_002s_wire_reads_its_example_turn_unchanged() {
    let mock = Llmock::start();
    let project = std::env::temp_dir().join(format!("engine-rojo-project-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&project);
    let setup = Setup::new(
        "rojo",
        &mock,
        "openai",
        "",
        &format!("[agents.bot.project]\nroot = {project:?}\n"),
    );
    let page = "# Intro\n\nA short introduction.\n";
    mock.script(json!([
        {"type": "reply", "tool_calls": [
            {"name": "create_directory", "arguments": {"path": "docs/intro"}},
            {"name": "get_text_content", "arguments": {"path": "../engine.toml"}}
        ]},
        {"type": "reply", "tool_calls": [{"name": "write_text_content", "arguments": {"path": "docs/intro/index.page", "text": page}}]},
        {"type": "reply", "text": "Done. I created docs/intro and wrote index.page."}
    ]));
    let (_served, authority) = serve(&setup, None);
    let read = rojo_client(
        &authority,
        "?wire=rojo",
        &json!({"message": "Create a directory at docs/intro and write an index.page file there."}),
    )
    .unwrap();
    assert_eq!(
        read["activity"],
        json!([
            {"name": "create_directory", "args": {"path": "docs/intro"}, "status": "ok"},
            {"name": "get_text_content", "args": {"path": "../engine.toml"}, "status": "error"},
            {"name": "write_text_content", "args": {"path": "docs/intro/index.page", "text": page}, "status": "ok"}
        ])
    );
    assert_eq!(
        read["reply"],
        "Done. I created docs/intro and wrote index.page."
    );
    // The seed's keys and nothing more, on every line.
    assert_eq!(read["unknown_keys"], json!({}));
    assert_eq!(
        std::fs::read_to_string(project.join("docs/intro/index.page")).unwrap(),
        page
    );
    let _ = std::fs::remove_dir_all(&project);
}

#[test]
fn a_turn_that_fails_ends_with_done_saying_why_and_an_unknown_wire_is_refused() {
    use std::io::Read;

    let mock = Llmock::start();
    let setup = Setup::new("rojo-failed", &mock, "openai", "", "");
    mock.script(json!([{"type": "fail", "status": 400}]));
    let (_served, authority) = serve(&setup, None);
    let read = rojo_client(&authority, "?wire=rojo", &json!({"message": "Hello?"})).unwrap();
    assert_eq!(read["activity"], json!([]));
    assert_eq!(read["reply"], "");
    // `DONE` is the only line, with the one key the seed lacks: why there is no answer.
    assert_eq!(read["lines"], 1);
    assert_eq!(read["unknown_keys"], json!({"DONE": ["error"]}));
    let why = read["done_error"].as_str().unwrap();
    assert!(why.contains("400"), "{why}");

    let mut answer = String::new();
    send(
        &authority,
        "POST",
        "/v1/agents/bot/turns?wire=xml",
        r#"{"message":"Hello?"}"#,
        None,
    )
    .read_to_string(&mut answer)
    .unwrap();
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(
        answer.contains("`events` (the default) or `rojo`"),
        "{answer}"
    );
    // Refused before the turn: the model was asked once, by the first turn alone.
    assert_eq!(mock.journal().len(), 1);
}
