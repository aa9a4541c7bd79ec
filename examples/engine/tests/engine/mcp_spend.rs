//! Model spend over MCP: a client calling `tools/call` in a loop stops being able to spend,
//! at its session's cap over stdio and at the agent's window cap over HTTP (where every
//! request is a session of its own), against a model provider double on a real socket.

use serde_json::{json, Value};
use test_support::mcp::{drive, Transport};
use test_support::provider::Provider;

const ENGINE: &str = env!("CARGO_BIN_EXE_engine");

/// `notes__summarize` asks for at most 100 tokens; at $1 per million tokens a call costs
/// $0.00011 and may cost its input's bytes more ($0.000192 for the note "t"). Each turn may
/// spend $0.01, a session $0.00045 (three calls), the agent $0.0007 an hour (five calls).
fn config(provider: &Provider, transport: Transport) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "engine-mcp-spend-{}-{transport:?}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("engine.toml");
    std::fs::write(
        &path,
        format!(
            "[gateway]\nbase_url = {:?}\ntiers.fast = {{ model = \"m\", usd_per_million_input = 1.0, usd_per_million_output = 1.0 }}\n\
             [agents.default]\nmodel = {{ spend_cap_usd = 0.01, session_cap_usd = 0.00045, window = {{ cap_usd = 0.0007, secs = 3600 }} }}\n",
            provider.url()
        ),
    )
    .unwrap();
    path
}

/// Ten `tools/call`s of `notes__summarize` in one client: how many were answered by the
/// model, and the refusals' texts.
fn call_in_a_loop(transport: Transport) -> (Provider, usize, Vec<String>) {
    let provider = Provider::start();
    let config = config(&provider, transport);
    let steps: Vec<Value> = (0..10)
        .map(|_| json!({ "call": "notes__summarize", "arguments": { "name": "n", "text": "t" } }))
        .collect();
    let report = drive(
        ENGINE,
        &["--config", config.to_str().unwrap()],
        transport,
        json!(steps),
    );
    let mut answered = 0;
    let mut refused = Vec::new();
    for result in report["steps"].as_array().unwrap() {
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        if result["isError"] == false {
            assert_eq!(text, "\"answer to t\"", "{result}");
            assert_eq!(
                refused,
                Vec::<String>::new(),
                "an answer after a refusal: {report}"
            );
            answered += 1;
        } else {
            refused.push(text.to_owned());
        }
    }
    (provider, answered, refused)
}

#[test]
fn over_stdio_a_client_in_a_loop_stops_at_its_sessions_cap() {
    let (provider, answered, refused) = call_in_a_loop(Transport::Stdio);
    assert_eq!(answered, 3, "{refused:?}");
    assert_eq!(
        provider.requests(),
        3,
        "a refused call never reaches the provider"
    );
    assert_eq!(refused.len(), 7);
    assert!(
        refused
            .iter()
            .all(|text| text.contains("the session's model spend cap is reached")),
        "{refused:?}"
    );
}

#[test]
fn over_http_a_client_in_a_loop_stops_at_the_agents_window_cap() {
    let (provider, answered, refused) = call_in_a_loop(Transport::Http);
    assert_eq!(answered, 5, "{refused:?}");
    assert_eq!(
        provider.requests(),
        5,
        "a refused call never reaches the provider"
    );
    assert_eq!(refused.len(), 5);
    assert!(
        refused
            .iter()
            .all(|text| text.contains("the agent's 3600-second model spend cap is reached")),
        "{refused:?}"
    );
}
