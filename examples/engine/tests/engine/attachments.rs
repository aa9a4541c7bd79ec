//! Files sent with a message, over HTTP: on the turn route and through the webhook
//! channel, named to the model (llmock) with their handles, read by a tool, and refused
//! with a 4xx that keeps nothing and asks no model.

use std::io::Read;

use base64::Engine as _;
use serde_json::{json, Value};
use test_support::llmock::Llmock;

use crate::turn_setup::{send, serve, Setup};

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn read(mut client: std::net::TcpStream) -> String {
    let mut answer = String::new();
    client.read_to_string(&mut answer).unwrap();
    answer
}

/// The last user message of the model's last request.
fn last_user_message(mock: &Llmock) -> String {
    let journal = mock.journal();
    let messages = journal.last().expect("a request")["body"]["messages"]
        .as_array()
        .unwrap()
        .clone();
    messages
        .iter()
        .rev()
        .find(|message| message["role"] == "user")
        .expect("a user message")["content"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The handle the message names for `filename`.
fn handle_of(message: &str, filename: &str) -> String {
    message
        .lines()
        .find(|line| line.starts_with(&format!("- {filename} (")))
        .and_then(|line| line.split("artifact handle ").nth(1))
        .unwrap_or_else(|| panic!("no line for {filename} in {message}"))
        .to_owned()
}

#[test]
fn over_http_attachments_reach_the_model_and_a_tool_reads_one_by_its_handle() {
    let mock = Llmock::start();
    let setup = Setup::new("attachments", &mock, "openai", "", "");
    mock.script(json!([{"type": "reply", "text": "A chart and a note."}]));
    let (_served, authority) = serve(&setup, None);
    let body = json!({
        "message": "What did I send?",
        "conversation": "c-files",
        "attachments": [
            {"filename": "chart.png", "media_type": "image/png", "data": base64(PNG)},
            {"filename": "note.txt", "media_type": "text/plain", "data": base64(b"Refunds take 14 days.")},
        ],
    });
    let answer = read(send(
        &authority,
        "POST",
        "/v1/agents/bot/turns",
        &body.to_string(),
        None,
    ));
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains(r#""reason":"answered""#), "{answer}");
    let told = last_user_message(&mock);
    assert!(told.starts_with("What did I send?\n\n[Attached"), "{told}");
    assert!(
        told.contains("- chart.png (image/png, 16 bytes): artifact handle "),
        "{told}"
    );
    assert!(
        told.contains("- note.txt (text/plain, 21 bytes): artifact handle "),
        "{told}"
    );
    // The next turn, the model hands the note's handle to a tool, which reads the file.
    let handle = handle_of(&told, "note.txt");
    mock.script(json!([
        {"type": "reply", "tool_calls": [{"name": "notes__read_file", "arguments": {"handle": handle}}]},
        {"type": "reply", "text": "It says refunds take 14 days."}
    ]));
    let body = json!({"message": "Read the note.", "conversation": "c-files"});
    let answer = read(send(
        &authority,
        "POST",
        "/v1/agents/bot/turns",
        &body.to_string(),
        None,
    ));
    assert!(answer.contains(r#""reason":"answered""#), "{answer}");
    assert_eq!(
        crate::turn_setup::last_tool_answer(&mock),
        "\"Refunds take 14 days.\""
    );
}

#[test]
fn over_http_refused_attachments_get_a_4xx_ask_no_model_and_keep_nothing() {
    let mock = Llmock::start();
    let setup = Setup::new("attachments-refused", &mock, "openai", "", "");
    let mut config = std::fs::read_to_string(setup.config()).unwrap();
    config.push_str("[attachments]\nmax_bytes = 32\nmax_count = 2\n");
    std::fs::write(setup.config(), config).unwrap();
    let (_served, authority) = serve(&setup, None);
    let file = |filename: &str, media_type: &str, data: String| json!({"filename": filename, "media_type": media_type, "data": data});
    let text = |bytes: &[u8]| file("note.txt", "text/plain", base64(bytes));
    let cases = [
        (
            "empty",
            vec![text(b"")],
            "400",
            "the attachment `note.txt` is empty",
        ),
        (
            "large",
            vec![text(&[b'x'; 33])],
            "413",
            "is 33 bytes, and one is at most 32",
        ),
        (
            "many",
            vec![text(b"a"), text(b"b"), text(b"c")],
            "413",
            "3 attachments",
        ),
        (
            "mistyped",
            vec![file("chart.png", "image/png", base64(b"not a picture"))],
            "415",
            "its bytes are not that",
        ),
        (
            "belied",
            vec![file("note.txt", "text/plain", base64(PNG))],
            "415",
            "its bytes are `image/png`",
        ),
        (
            "refused type",
            vec![file("run.sh", "application/x-sh", base64(b"ls"))],
            "415",
            "does not accept",
        ),
        (
            "path",
            vec![file("../../etc/passwd", "text/plain", base64(b"x"))],
            "400",
            "is not a file name",
        ),
        (
            "not base64",
            vec![file("note.txt", "text/plain", "%%%".into())],
            "400",
            "is not base64",
        ),
    ];
    for (case, attachments, status, says) in cases {
        let body =
            json!({"message": "Here.", "conversation": "c-refused", "attachments": attachments});
        let answer = read(send(
            &authority,
            "POST",
            "/v1/agents/bot/turns",
            &body.to_string(),
            None,
        ));
        assert!(
            answer.starts_with(&format!("HTTP/1.1 {status}")),
            "{case}: {answer}"
        );
        assert!(answer.contains(says), "{case}: {answer}");
    }
    let without_message = json!({"conversation": "c-refused", "attachments": [text(b"x")]});
    let answer = read(send(
        &authority,
        "POST",
        "/v1/agents/bot/turns",
        &without_message.to_string(),
        None,
    ));
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(
        answer.contains("attachments come with a `message`"),
        "{answer}"
    );
    assert!(mock.journal().is_empty(), "a model was asked");
    let history = read(send(
        &authority,
        "GET",
        "/v1/conversations/c-refused",
        "",
        None,
    ));
    assert!(
        history.starts_with("HTTP/1.1 404"),
        "something was kept: {history}"
    );
}

#[test]
fn a_channels_files_reach_the_model_and_a_file_it_cannot_take_is_refused() {
    let mock = Llmock::start();
    let setup = Setup::new("attachments-channel", &mock, "openai", "", "");
    let mut config = std::fs::read_to_string(setup.config()).unwrap();
    config.push_str("[channels.webhook]\nagent = \"bot\"\n");
    std::fs::write(setup.config(), config).unwrap();
    mock.script(json!([{"type": "reply", "text": "Got the chart."}]));
    let (_served, authority) = serve(&setup, None);
    let post = |files: Value| {
        let body =
            json!({"conversation": "c-1", "from": "u-7", "text": "See this.", "files": files});
        read(send(
            &authority,
            "POST",
            "/channels/webhook",
            &body.to_string(),
            None,
        ))
    };
    let refused =
        post(json!([{"name": "chart.png", "type": "image/png", "base64": base64(b"text")}]));
    assert!(refused.starts_with("HTTP/1.1 415"), "{refused}");
    assert!(mock.journal().is_empty(), "a model was asked");
    let answer = post(json!([{"name": "chart.png", "type": "image/png", "base64": base64(PNG)}]));
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let reply: Value =
        serde_json::from_str(answer.split_once("\r\n\r\n").unwrap().1.trim()).unwrap();
    assert_eq!(reply["reply"], "Got the chart.", "{reply}");
    let told = last_user_message(&mock);
    assert!(told.starts_with("See this.\n\n[Attached"), "{told}");
    assert!(
        told.contains("- chart.png (image/png, 16 bytes): artifact handle "),
        "{told}"
    );
}
