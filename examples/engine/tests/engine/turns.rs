//! The agent turn against a real third-party provider, `llmock`, in both wire formats:
//! the engine runs as a process (`engine turn`, `engine serve`), llmock scripts the
//! model's replies and faults, and its journal shows what the engine sent.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::turn_setup::{chat, done, of_type, send, serve, serve_with, wait_until_asked, Setup};
use serde_json::{json, Value};
use test_support::llmock::Llmock;

fn weather(city: &str) -> Value {
    json!({"name": "weather__weather", "arguments": {"city": city, "days": 1, "units": null}})
}

/// The ids of the calls the assistant made, and the ids the tool answers carry, in the
/// body of a chat completions request.
fn openai_calls_and_answers(body: &Value) -> (Vec<String>, Vec<String>) {
    let messages = body["messages"].as_array().expect("messages");
    let calls = messages
        .iter()
        .flat_map(|message| {
            message["tool_calls"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .map(|call| call["id"].as_str().expect("an id").to_owned())
        .collect();
    let answers = messages
        .iter()
        .filter(|message| message["role"] == "tool")
        .map(|message| message["tool_call_id"].as_str().expect("an id").to_owned())
        .collect();
    (calls, answers)
}

#[test]
fn openai_parallel_tool_calls_are_each_answered_with_their_id_in_call_order() {
    let mock = Llmock::start();
    let setup = Setup::new("openai-parallel", &mock, "openai", "", "");
    mock.script(json!([
        {"type": "reply", "tool_calls": [weather("Rome"), weather("Paris"), weather("Tokyo")]},
        {"type": "reply", "text": "Sunny everywhere."}
    ]));
    let (events, output) = setup.turn(&["Weather in three cities?"]);
    assert!(output.status.success(), "{output:?}");
    let calls = of_type(&events, "tool_call");
    let results = of_type(&events, "tool_result");
    assert_eq!(calls.len(), 3, "{events:#?}");
    assert_eq!(results.len(), 3, "{events:#?}");
    assert!(
        results.iter().all(|result| result["status"] == "ok"),
        "{events:#?}"
    );
    assert_eq!(calls[0]["tool_id"], "weather:weather");
    assert_eq!(calls[1]["arguments"]["city"], "Paris");
    let chat: String = of_type(&events, "chat")
        .iter()
        .map(|chat| chat["text"].as_str().unwrap())
        .collect();
    assert_eq!(chat, "Sunny everywhere.");
    assert_eq!(done(&events)["stop"]["reason"], "answered");
    let seqs: Vec<u64> = events
        .iter()
        .map(|event| event["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, (1..=events.len() as u64).collect::<Vec<_>>());

    let journal = mock.journal();
    assert_eq!(journal.len(), 2, "{journal:#?}");
    let (made, answered) = openai_calls_and_answers(&journal[1]["body"]);
    let streamed: Vec<String> = calls
        .iter()
        .map(|call| call["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(made, streamed);
    assert_eq!(answered, made, "every call answered, in call order");
    assert_eq!(journal[0]["body"]["stream"], true);
    assert_eq!(journal[0]["body"]["tool_choice"], "auto");
    // Usage as llmock reported it, priced at the configured $1 and $2 per million.
    let usage = &done(&events)["usage"];
    let input = usage["input_tokens"].as_f64().unwrap();
    let output = usage["output_tokens"].as_f64().unwrap();
    assert!(output > 0.0, "{usage}");
    let cost = done(&events)["cost_usd"].as_f64().unwrap();
    assert!(
        (cost - (input + output * 2.0) / 1e6).abs() < 1e-12,
        "{cost} for {usage}"
    );
    assert!(results.iter().all(|result| result["duration_ms"].is_u64()));
}

#[test]
fn anthropic_parallel_tool_uses_are_answered_by_tool_results_with_their_ids() {
    let mock = Llmock::start();
    let setup = Setup::new("anthropic-parallel", &mock, "anthropic", "", "");
    mock.script(json!([
        {"type": "reply", "text": "Let me check.", "tool_calls": [weather("Rome"), weather("Sydney")]},
        {"type": "reply", "text": "Warm in Sydney."}
    ]));
    let (events, output) = setup.turn(&["Rome and Sydney?"]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(of_type(&events, "tool_result").len(), 2, "{events:#?}");
    assert_eq!(done(&events)["stop"]["reason"], "answered");
    let journal = mock.journal();
    assert_eq!(journal.len(), 2, "{journal:#?}");
    assert_eq!(journal[1]["path"], "/anthropic/v1/messages");
    let messages = journal[1]["body"]["messages"].as_array().unwrap();
    let assistant = &messages[1];
    assert_eq!(assistant["role"], "assistant");
    let used: Vec<&str> = assistant["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|block| block["type"] == "tool_use")
        .map(|block| block["id"].as_str().unwrap())
        .collect();
    let results = &messages[2];
    assert_eq!(results["role"], "user");
    let answered: Vec<&str> = results["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|block| {
            assert_eq!(block["type"], "tool_result");
            block["tool_use_id"].as_str().unwrap()
        })
        .collect();
    assert_eq!(used.len(), 2);
    assert_eq!(answered, used);
}

/// What a client reads of a turn: each event's kind and content, without the ids and
/// timings that differ from run to run.
fn what_a_client_reads(events: &[Value]) -> Vec<Value> {
    events
        .iter()
        .map(|event| match event["type"].as_str().unwrap() {
            "chat" => json!(["chat", event["text"]]),
            "tool_call" => json!(["tool_call", event["tool_id"], event["arguments"]]),
            "tool_result" => json!(["tool_result", event["status"], event["result"]]),
            "done" => json!(["done", event["stop"]["reason"], event["usage"]]),
            other => json!([other]),
        })
        .collect()
}

#[test]
fn a_non_streamed_provider_gives_the_same_turn() {
    let mock = Llmock::start();
    let script = json!([
        {"type": "reply", "tool_calls": [weather("London")]},
        {"type": "reply", "text": "Rain."}
    ]);
    let streamed = Setup::new("streamed", &mock, "openai", "", "");
    mock.script(script.clone());
    let (streamed, output) = streamed.turn(&["London?"]);
    assert!(output.status.success(), "{output:?}");
    let unary = Setup::new("unary", &mock, "openai", "stream = false", "");
    mock.script(script);
    let (events, output) = unary.turn(&["London?"]);
    assert!(output.status.success(), "{output:?}");
    let journal = mock.journal();
    assert_eq!(journal[0]["body"]["stream"], true);
    assert_eq!(journal[2]["body"]["stream"], false);
    assert_eq!(of_type(&events, "tool_result")[0]["status"], "ok");
    assert_eq!(of_type(&events, "chat")[0]["text"], "Rain.");
    assert_eq!(
        what_a_client_reads(&events),
        what_a_client_reads(&streamed),
        "streamed: {streamed:#?}\nnot streamed: {events:#?}"
    );
    // And the model was asked the same: the requests differ in how to answer only.
    let asked = |request: &Value| {
        let mut body = request["body"].clone();
        let body_object = body.as_object_mut().unwrap();
        body_object.remove("stream");
        body_object.remove("stream_options");
        body_object.remove("model");
        // The ids of the calls are the provider's, another each time.
        let text = body.to_string();
        call_ids(&text)
            .iter()
            .fold(text.clone(), |text, id| text.replace(id.as_str(), "<id>"))
    };
    assert_eq!(asked(&journal[1]), asked(&journal[3]));
}

/// The tool call ids (`"id":"..."`, `"tool_call_id":"..."`) a request body quotes.
fn call_ids(body: &str) -> Vec<String> {
    let mut ids = Vec::new();
    for key in ["\"id\":\"", "\"tool_call_id\":\""] {
        for (at, _) in body.match_indices(key) {
            let rest = &body[at + key.len()..];
            if let Some(end) = rest.find('"') {
                ids.push(rest[..end].to_owned());
            }
        }
    }
    ids
}

#[test]
fn a_truncated_stream_is_a_provider_error_not_an_answer() {
    let mock = Llmock::start();
    let setup = Setup::new("truncated", &mock, "openai", "", "");
    mock.script(json!([
        {"type": "reply", "text": "This reply is cut off before its end arrives."},
        {"type": "stream_fault", "kind": "truncate", "after_chunks": 2}
    ]));
    let (events, output) = setup.turn(&["Hello?"]);
    assert!(!output.status.success(), "{output:?}");
    let stop = &done(&events)["stop"];
    assert_eq!(stop["reason"], "provider_error");
    assert!(
        stop["message"].as_str().unwrap().contains("cut off"),
        "{stop}"
    );
    assert_eq!(
        mock.journal().len(),
        1,
        "a stream that broke midway is not sent again"
    );
}

#[test]
fn a_disconnected_stream_is_a_provider_error() {
    let mock = Llmock::start();
    let setup = Setup::new("disconnect", &mock, "anthropic", "", "");
    mock.script(json!([
        {"type": "reply", "text": "This reply loses its connection."},
        {"type": "stream_fault", "kind": "disconnect", "after_chunks": 2}
    ]));
    let (events, _) = setup.turn(&["Hello?"]);
    assert_eq!(
        done(&events)["stop"]["reason"],
        "provider_error",
        "{events:#?}"
    );
    assert_eq!(of_type(&events, "error").len(), 1);
}

#[test]
fn a_malformed_chunk_is_an_error_never_an_end_of_stream() {
    let mock = Llmock::start();
    let setup = Setup::new("malformed", &mock, "openai", "", "");
    mock.script(json!([
        {"type": "reply", "text": "one two three four"},
        {"type": "stream_fault", "kind": "malformed", "after_chunks": 1}
    ]));
    let (events, _) = setup.turn(&["Hello?"]);
    let stop = &done(&events)["stop"];
    assert_eq!(stop["reason"], "provider_error", "{events:#?}");
    assert!(
        stop["message"].as_str().unwrap().contains("unusable"),
        "{stop}"
    );
}

#[test]
fn a_stalled_stream_ends_the_turn_at_its_deadline() {
    let mock = Llmock::start();
    let setup = Setup::new("stall", &mock, "openai", "", "deadline_secs = 1");
    mock.script(json!([
        {"type": "reply", "text": "slow words"},
        {"type": "stream_fault", "kind": "stall", "after_chunks": 1, "stall_seconds": 20}
    ]));
    let started = Instant::now();
    let (events, _) = setup.turn(&["Hello?"]);
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "the turn did not wait for the stall"
    );
    assert_eq!(done(&events)["stop"]["reason"], "deadline", "{events:#?}");
}

#[test]
fn a_429_with_retry_after_is_retried_after_the_wait_it_asks() {
    let mock = Llmock::start();
    let setup = Setup::new("429", &mock, "openai", "", "");
    mock.script(json!([
        {"type": "fail", "status": 429, "retry_after": 1},
        {"type": "reply", "text": "After the wait."}
    ]));
    let (events, output) = setup.turn(&["Hello?"]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(of_type(&events, "chat")[0]["text"], "After the wait.");
    let journal = mock.journal();
    assert_eq!(journal.len(), 2, "{journal:#?}");
    assert_eq!(journal[0]["status"], 429);
    let waited =
        journal[1]["started_at"].as_f64().unwrap() - journal[0]["started_at"].as_f64().unwrap();
    assert!(
        waited >= 0.9,
        "the retry waited {waited} s, Retry-After asked 1 s"
    );
}

#[test]
fn an_unknown_tool_and_malformed_arguments_are_answered_as_errors() {
    let mock = Llmock::start();
    let setup = Setup::new("tool-faults", &mock, "openai", "", "");
    mock.script(json!([
        {"type": "reply", "tool_calls": [weather("Rome")]},
        {"type": "tool_fault", "kind": "unknown_tool"},
        {"type": "reply", "tool_calls": [weather("Paris")]},
        {"type": "tool_fault", "kind": "malformed_arguments"},
        {"type": "reply", "text": "Sorry."}
    ]));
    let (events, output) = setup.turn(&["Weather?"]);
    assert!(output.status.success(), "{output:?}");
    let results = of_type(&events, "tool_result");
    assert_eq!(results.len(), 2, "{events:#?}");
    assert!(
        results[0]["error"]
            .as_str()
            .unwrap()
            .starts_with("unknown_tool"),
        "{results:#?}"
    );
    assert!(
        results[1]["error"]
            .as_str()
            .unwrap()
            .starts_with("invalid_arguments"),
        "{results:#?}"
    );
    let journal = mock.journal();
    let (made, answered) = openai_calls_and_answers(&journal[2]["body"]);
    assert_eq!(made.len(), 2);
    assert_eq!(answered, made);
}

#[test]
fn the_last_allowed_request_offers_no_tools_so_the_model_answers() {
    let mock = Llmock::start();
    let setup = Setup::new("limit", &mock, "openai", "", "max_model_requests = 2");
    mock.script(json!([
        {"type": "reply", "tool_calls": [weather("Rome")]},
        {"type": "reply", "text": "Rome: 17 degrees."}
    ]));
    let (events, output) = setup.turn(&["Weather?"]);
    assert!(output.status.success(), "{output:?}");
    let stop = &done(&events)["stop"];
    assert_eq!(stop["reason"], "limit");
    assert_eq!(stop["limit"], "model_requests");
    assert_eq!(of_type(&events, "chat")[0]["text"], "Rome: 17 degrees.");
    let journal = mock.journal();
    assert_eq!(journal[0]["body"]["tool_choice"], "auto");
    assert_eq!(journal[1]["body"]["tool_choice"], "none");
}

#[test]
fn an_identical_call_past_the_cap_is_answered_with_an_error_instead_of_run() {
    let mock = Llmock::start();
    let setup = Setup::new("identical", &mock, "openai", "", "max_identical_calls = 1");
    // A command tool that leaves a line in `runs` each time it runs.
    let tools_d = setup.dir.join("tools.d");
    std::fs::create_dir_all(&tools_d).unwrap();
    std::fs::write(
        tools_d.join("tally.json"),
        json!({
            "namespace": "local",
            "name": "tally",
            "description": "Counts its runs.",
            "input_schema": {
                "type": "object",
                "properties": { "city": { "type": "string" } },
                "required": ["city"],
                "additionalProperties": false
            },
            "command": ["sh", "-c", "echo ran >> runs; echo '{\"ok\": true}'"]
        })
        .to_string(),
    )
    .unwrap();
    let tally = || json!({"name": "local__tally", "arguments": {"city": "Rome"}});
    mock.script(json!([
        {"type": "reply", "tool_calls": [tally()]},
        {"type": "reply", "tool_calls": [tally()]},
        {"type": "reply", "text": "Done."}
    ]));
    let (events, output) = setup.turn(&["Weather?"]);
    assert!(output.status.success(), "{output:?}");
    let results = of_type(&events, "tool_result");
    assert_eq!(results[0]["status"], "ok", "{events:#?}");
    assert_eq!(results[1]["status"], "error");
    assert!(
        results[1]["error"]
            .as_str()
            .unwrap()
            .contains("already ran"),
        "{results:#?}"
    );
    let runs = std::fs::read_to_string(tools_d.join("runs")).unwrap();
    assert_eq!(runs, "ran\n", "the identical call ran again");
}

#[test]
fn a_conversation_continues_across_engine_restarts() {
    let mock = Llmock::start();
    let setup = Setup::new("continue", &mock, "openai", "", "");
    mock.script(json!([
        {"type": "reply", "tool_calls": [weather("Tokyo")]},
        {"type": "reply", "text": "Tokyo is cool."},
        {"type": "reply", "text": "You asked about Tokyo."}
    ]));
    let (_, first) = setup.turn(&["Tokyo?", "--conversation", "c-1"]);
    assert!(first.status.success(), "{first:?}");
    let (events, second) = setup.turn(&["What did I ask?", "--conversation", "c-1"]);
    assert!(second.status.success(), "{second:?}");
    assert_eq!(
        of_type(&events, "chat")[0]["text"],
        "You asked about Tokyo."
    );
    let journal = mock.journal();
    let roles: Vec<&str> = journal[2]["body"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| message["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant", "user"]);
}

#[test]
fn provider_fields_the_engine_does_not_know_are_sent_back_verbatim() {
    let mock = Llmock::start();
    let setup = Setup::new("unknown-fields", &mock, "openai", "", "");
    // A stored step whose assistant message carries a provider's reasoning and a
    // Gemini-style thought signature on its call, as the assembler keeps them.
    let database = setup.dir.join("data/conversations.sqlite");
    std::fs::create_dir_all(database.parent().unwrap()).unwrap();
    let (_, created) = setup.turn(&["--resume", "--conversation", "none-yet"]);
    assert!(
        !created.status.success(),
        "nothing to resume in a new conversation"
    );
    let stored = [
        json!({"role": "user", "content": "Rome?"}),
        json!({"role": "assistant", "content": "", "tool_calls": [{"id": "call_kept", "name": "weather__weather",
            "arguments": "{\"city\":\"Rome\",\"days\":1,\"units\":null}",
            "extra": {"extra_content": {"google": {"thought_signature": "sig-1"}}}}],
            "extra": {"openai": {"reasoning_content": "I should look it up."}}}),
        json!({"role": "tool", "call_id": "call_kept", "name": "weather__weather", "status": "ok", "content": "{}"}),
    ];
    let connection = rusqlite::Connection::open(&database).unwrap();
    for (seq, message) in stored.iter().enumerate() {
        connection
            .execute(
                "INSERT INTO messages (conversation, seq, body) VALUES ('c-kept', ?1, ?2)",
                rusqlite::params![seq as i64, message.to_string()],
            )
            .unwrap();
    }
    drop(connection);
    mock.script(json!([{"type": "reply", "text": "17 degrees."}]));
    let (events, output) = setup.turn(&["--resume", "--conversation", "c-kept"]);
    assert!(output.status.success(), "{output:?} {events:#?}");
    let body = &mock.journal()[0]["body"];
    let assistant = &body["messages"][1];
    assert_eq!(assistant["reasoning_content"], "I should look it up.");
    assert_eq!(
        assistant["tool_calls"][0]["extra_content"]["google"]["thought_signature"],
        "sig-1"
    );
    assert_eq!(
        assistant["tool_calls"][0]["function"]["arguments"],
        "{\"city\":\"Rome\",\"days\":1,\"units\":null}"
    );
}

#[test]
fn over_http_a_client_that_goes_away_cancels_the_turn_and_it_is_recorded_cancelled() {
    use std::io::Read;

    let mock = Llmock::start();
    let setup = Setup::new("http-cancel", &mock, "openai", "", "");
    mock.script(json!([
        {"type": "reply", "text": "words that never finish"},
        {"type": "stream_fault", "kind": "stall", "after_chunks": 1, "stall_seconds": 30}
    ]));
    let (served, authority) = serve(&setup, None);
    let body = r#"{"message":"Hello?","conversation":"c-gone"}"#;
    let mut client = send(&authority, "POST", "/v1/agents/bot/turns", body, None);
    let mut head = [0u8; 64];
    let read = client.read(&mut head).unwrap();
    assert!(
        head[..read].starts_with(b"HTTP/1.1 200"),
        "{:?}",
        String::from_utf8_lossy(&head[..read])
    );
    // The model is asked, and stalls mid-stream; the client gives up.
    wait_until_asked(&mock);
    drop(client);

    let database = rusqlite::Connection::open(setup.dir.join("data/conversations.sqlite")).unwrap();
    let started = Instant::now();
    let stop: String = loop {
        let recorded = database.query_row(
            "SELECT stop FROM turns WHERE conversation = 'c-gone'",
            [],
            |row| row.get(0),
        );
        if let Ok(stop) = recorded {
            break stop;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the turn was never recorded"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(
        serde_json::from_str::<Value>(&stop).unwrap()["reason"],
        "cancelled"
    );
    let stored: String = database
        .query_row(
            "SELECT body FROM messages WHERE conversation = 'c-gone' ORDER BY seq",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&stored).unwrap()["content"],
        "Hello?"
    );
    let journal = mock.journal();
    assert_eq!(
        journal.len(),
        1,
        "{journal:#?}\nthe engine said:\n{}",
        served.stderr_so_far()
    );
    assert_eq!(
        journal[0]["completed"], false,
        "the engine left the stream before its end"
    );
    drop(served);
}

#[test]
fn over_http_a_second_turn_of_a_conversation_under_way_is_a_409_that_asks_no_model_and_stores_nothing(
) {
    use std::io::Read;

    let mock = Llmock::start();
    let setup = Setup::new("http-busy", &mock, "openai", "", "");
    mock.script(json!([
        {"type": "reply", "text": "words that never finish"},
        {"type": "stream_fault", "kind": "stall", "after_chunks": 1, "stall_seconds": 30}
    ]));
    let (served, authority) = serve(&setup, None);
    let first = r#"{"message":"Hello?","conversation":"c-busy"}"#;
    let mut running = send(&authority, "POST", "/v1/agents/bot/turns", first, None);
    let mut head = [0u8; 64];
    let read = running.read(&mut head).unwrap();
    assert!(
        head[..read].starts_with(b"HTTP/1.1 200"),
        "{:?}",
        String::from_utf8_lossy(&head[..read])
    );

    // The first turn is stalled in its model's stream: a second one is refused whole.
    // A reply is queued for it, which a model request would take.
    wait_until_asked(&mock);
    mock.script(json!([{"type": "reply", "text": "never asked for"}]));
    let second = r#"{"message":"Are you there?","conversation":"c-busy"}"#;
    let mut answer = String::new();
    send(&authority, "POST", "/v1/agents/bot/turns", second, None)
        .read_to_string(&mut answer)
        .unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 409"), "{answer}");
    assert!(
        body.contains("a turn of the conversation `c-busy` is under way"),
        "{body}"
    );
    drop(running);

    // Once the first turn is recorded cancelled, every record there is to see is there.
    let database = rusqlite::Connection::open(setup.dir.join("data/conversations.sqlite")).unwrap();
    let started = Instant::now();
    while database
        .query_row(
            "SELECT count(*) FROM turns WHERE conversation = 'c-busy' AND stop LIKE '%cancelled%'",
            [],
            |row| row.get::<_, i64>(0),
        )
        .unwrap_or(0)
        == 0
    {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the first turn was never recorded"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let turns: i64 = database
        .query_row(
            "SELECT count(*) FROM turns WHERE conversation = 'c-busy'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(turns, 1, "the refused turn left no record");
    let mut users = database
        .prepare("SELECT body FROM messages WHERE conversation = 'c-busy' ORDER BY seq")
        .unwrap();
    let contents: Vec<Value> = users
        .query_map([], |row| row.get::<_, String>(0))
        .unwrap()
        .map(|body| serde_json::from_str::<Value>(&body.unwrap()).unwrap())
        .filter(|message| message["role"] == "user")
        .map(|message| message["content"].clone())
        .collect();
    assert_eq!(
        contents,
        [json!("Hello?")],
        "the refused message was not stored"
    );
    assert_eq!(
        mock.pending().len(),
        1,
        "the refused turn asked no model: the reply queued for it is still there"
    );
    drop(served);
}

#[test]
fn sigterm_stops_serve_cancelling_the_turn_under_way_which_is_stored_cancelled() {
    use std::io::Read;

    let mock = Llmock::start();
    let setup = Setup::new("sigterm", &mock, "openai", "", "");
    mock.script(json!([
        {"type": "reply", "text": "words that never finish"},
        {"type": "stream_fault", "kind": "stall", "after_chunks": 1, "stall_seconds": 30}
    ]));
    let (served, authority) = serve(&setup, None);
    let body = r#"{"message":"Hello?","conversation":"c-term"}"#;
    let mut client = send(&authority, "POST", "/v1/agents/bot/turns", body, None);
    let mut head = [0u8; 64];
    let read = client.read(&mut head).unwrap();
    assert!(head[..read].starts_with(b"HTTP/1.1 200"));
    let started = Instant::now();
    while !mock.pending().is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the model was never asked"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let terminated = std::process::Command::new("kill")
        .args(["-TERM", &served.pid().to_string()])
        .status()
        .unwrap();
    assert!(terminated.success());
    // The client reads the rest of the turn: its done, cancelled.
    let mut rest = String::new();
    let _ = client.read_to_string(&mut rest);
    assert!(
        rest.contains(r#""type":"done","stop":{"reason":"cancelled"}"#),
        "{rest}"
    );
    let database = rusqlite::Connection::open(setup.dir.join("data/conversations.sqlite")).unwrap();
    let stop: String = database
        .query_row(
            "SELECT stop FROM turns WHERE conversation = 'c-term'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(stop, r#"{"reason":"cancelled"}"#);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "stopped well before the model's stall ends"
    );
    drop(served);
}

#[test]
fn the_conversations_state_outlives_the_engine() {
    let mock = Llmock::start();
    let setup = Setup::new("state", &mock, "openai", "", "");
    let remember =
        json!({"name": "notes__remember", "arguments": {"name": "allergy", "text": "penicillin"}});
    let recall = json!({"name": "notes__recall", "arguments": {"name": "allergy"}});
    mock.script(json!([
        {"type": "reply", "tool_calls": [remember]},
        {"type": "reply", "text": "Noted."},
        {"type": "reply", "tool_calls": [recall]},
        {"type": "reply", "text": "Penicillin."}
    ]));
    let (events, first) = setup.turn(&["Remember my allergy", "--conversation", "c-state"]);
    assert!(first.status.success(), "{first:?}");
    assert_eq!(
        of_type(&events, "tool_result")[0]["status"],
        "ok",
        "{events:#?}"
    );
    // A new engine process: the state comes back from the data directory.
    let (events, second) = setup.turn(&["What is my allergy?", "--conversation", "c-state"]);
    assert!(second.status.success(), "{second:?}");
    assert_eq!(
        of_type(&events, "tool_result")[0]["result"],
        "penicillin",
        "{events:#?}"
    );
}

#[test]
fn anthropic_a_429_is_retried_and_the_last_request_offers_no_tools() {
    let mock = Llmock::start();
    let setup = Setup::new(
        "anthropic-429",
        &mock,
        "anthropic",
        "",
        "max_model_requests = 2",
    );
    mock.script(json!([
        {"type": "fail", "status": 429, "retry_after": 1},
        {"type": "reply", "tool_calls": [weather("Rome")]},
        {"type": "reply", "text": "17 degrees."}
    ]));
    let (events, output) = setup.turn(&["Rome?"]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        done(&events)["stop"]["limit"],
        "model_requests",
        "{events:#?}"
    );
    let journal = mock.journal();
    assert_eq!(journal.len(), 3, "{journal:#?}");
    assert_eq!(journal[0]["status"], 429);
    assert_eq!(journal[1]["body"]["tool_choice"]["type"], "auto");
    assert_eq!(journal[2]["body"]["tool_choice"]["type"], "none");
}

#[test]
fn over_http_turns_need_the_token_and_stream_ndjson_and_the_history_is_served() {
    use std::io::Read;

    let mock = Llmock::start();
    let setup = Setup::new("http-ndjson", &mock, "openai", "", "");
    mock.script(json!([
        {"type": "reply", "tool_calls": [weather("Paris")]},
        {"type": "reply", "text": "Mild."}
    ]));
    let token = "a-token-long-enough-for-the-engine-to-accept-it-0123456789";
    let (served, authority) = serve(&setup, Some(token));
    let exchange = |method: &str, path: &str, body: &str, token: Option<&str>| {
        let mut answer = String::new();
        send(&authority, method, path, body, token)
            .read_to_string(&mut answer)
            .unwrap();
        answer
    };
    let body =
        r#"{"message":"Paris?","conversation":"c-http","subscriber":"u-1","locale":"it-IT"}"#;
    let refused = exchange("POST", "/v1/agents/bot/turns", body, None);
    assert!(refused.starts_with("HTTP/1.1 401"), "{refused}");
    assert!(
        mock.journal().is_empty(),
        "a refused request reached no model"
    );

    let answer = exchange("POST", "/v1/agents/bot/turns", body, Some(token));
    let (head, chunked) = answer.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        head.contains("content-type: application/x-ndjson"),
        "{head}"
    );
    assert!(head.contains("x-conversation-id: c-http"), "{head}");
    // The body is chunked: its lines are chunk sizes and the events.
    let events: Vec<Value> = chunked
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(Value::is_object)
        .collect();
    let kinds: Vec<&str> = events
        .iter()
        .map(|event| event["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["tool_call", "tool_result", "chat", "done"],
        "{events:#?}"
    );
    let seqs: Vec<u64> = events
        .iter()
        .map(|event| event["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, [1, 2, 3, 4]);

    let history = exchange("GET", "/v1/conversations/c-http", "", Some(token));
    let (head, body) = history.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let history: Value = serde_json::from_str(body.trim()).unwrap();
    let roles: Vec<&str> = history["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| message["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant"]);
    drop(served);
}

#[test]
fn a_halt_that_asks_for_no_trace_stores_nothing_and_asks_no_model() {
    let mock = Llmock::start();
    let setup = Setup::new("no-trace", &mock, "openai", "", "");
    // The guard plugin answers a blank message itself, with `persist: false`.
    let (events, output) = setup.turn(&["   ", "--conversation", "c-blank"]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(done(&events)["stop"]["reason"], "halted", "{events:#?}");
    assert_eq!(
        of_type(&events, "chat").len(),
        1,
        "the hook's answer is sent"
    );
    assert!(mock.journal().is_empty(), "no model was asked");
    // Every table of the store, whatever it is keyed by: this was the data directory's
    // only turn, so any row at all is a trace of it. All but `owners`: the engine claims
    // a conversation for its end user before the turn runs, so a turn that stores
    // nothing still leaves its owner (issue 31 moves the claim to the first stored
    // message; this exception goes with it).
    let database = rusqlite::Connection::open_with_flags(
        setup.dir.join("data/conversations.sqlite"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let tables: Vec<String> = database
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name != 'owners'")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(tables.contains(&"messages".to_owned()), "{tables:?}");
    for table in tables {
        let rows: i64 = database
            .query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |row| {
                row.get(0)
            })
            .unwrap();
        assert_eq!(rows, 0, "{table} keeps something of the turn");
    }
}

#[test]
fn a_model_calls_an_external_command_tool_in_a_turn_like_a_linked_one() {
    let mock = Llmock::start();
    let setup = Setup::new("external-tool", &mock, "anthropic", "", "");
    let tools_d = setup.dir.join("tools.d");
    std::fs::create_dir_all(&tools_d).unwrap();
    let templates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../extensions");
    for name in ["word_count.json", "word_count.py"] {
        std::fs::copy(templates.join(name), tools_d.join(name)).unwrap();
    }
    mock.script(json!([
        {"type": "reply", "tool_calls": [
            {"name": "local__word_count", "arguments": {"text": "three little words"}},
            weather("Rome"),
        ]},
        {"type": "reply", "text": "Three words, and sunny."}
    ]));
    let (events, output) = setup.turn(&["Count and check the weather"]);
    assert!(output.status.success(), "{output:?}");
    let calls = of_type(&events, "tool_call");
    assert_eq!(calls[0]["tool_id"], "local:word_count", "{events:#?}");
    let results = of_type(&events, "tool_result");
    let counted = results
        .iter()
        .find(|result| result["id"] == calls[0]["id"])
        .unwrap();
    assert_eq!(counted["status"], "ok", "{events:#?}");
    assert_eq!(counted["result"], json!({"words": 3}));
    assert_eq!(done(&events)["stop"]["reason"], "answered");
    // The model was offered it beside the linked tools, in Anthropic's shape, strict.
    let journal = mock.journal();
    let offered = journal[0]["body"]["tools"].as_array().unwrap();
    let entry = offered
        .iter()
        .find(|tool| tool["name"] == "local__word_count")
        .unwrap();
    assert_eq!(entry["strict"], true, "{entry}");
    assert_eq!(entry["input_schema"]["required"], json!(["text"]));
    assert!(offered
        .iter()
        .any(|tool| tool["name"] == "weather__weather"));
    // And the model read its result, as the answer to that call.
    let answered = journal[1]["body"]["messages"].to_string();
    let id = calls[0]["id"].as_str().unwrap();
    assert!(answered.contains(id), "{answered}");
    assert!(answered.contains(r#"{\"words\": 3}"#), "{answered}");
}

#[test]
fn sighup_reloads_the_configuration_and_the_next_turn_uses_a_new_provider_and_agent() {
    use std::io::Read;

    let mock = Llmock::start();
    let setup = Setup::new("sighup", &mock, "openai", "", "");
    let token = "a-token-long-enough-for-the-engine-to-accept-it-0123456789";
    let (served, authority) = serve(&setup, Some(token));
    let exchange = |path: &str, body: &str| {
        let mut answer = String::new();
        send(&authority, "POST", path, body, Some(token))
            .read_to_string(&mut answer)
            .unwrap();
        answer
    };
    // A blank message is refused after the agent is looked up, before any model is
    // asked: 404 for an agent the engine does not have, 400 for one it has.
    let known = |agent: &str| {
        let answer = exchange(&format!("/v1/agents/{agent}/turns"), r#"{"message":" "}"#);
        assert!(
            answer.starts_with("HTTP/1.1 400") || answer.starts_with("HTTP/1.1 404"),
            "{answer}"
        );
        answer.starts_with("HTTP/1.1 400")
    };
    let hangup = || {
        let sent = std::process::Command::new("kill")
            .args(["-HUP", &served.pid().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
    };
    assert!(known("bot"));
    assert!(!known("helper"));

    // A second provider, in the other wire format, and an agent whose turns use it.
    let first = std::fs::read_to_string(setup.config()).unwrap();
    let second = format!(
        "{first}[providers.second]\nwire = \"anthropic\"\nbase_url = {:?}\nmodel = {:?}\n\
         [agents.helper.turn]\nprovider = \"second\"\n",
        mock.anthropic_url(),
        mock.other_model("second"),
    );
    std::fs::write(setup.config(), &second).unwrap();
    hangup();
    served.wait_for_stderr("SIGHUP: configuration reloaded");
    assert!(known("helper"));
    mock.script(json!([{"type": "reply", "text": "From the second provider."}]));
    let answer = exchange(
        "/v1/agents/helper/turns",
        r#"{"message":"Hello?","conversation":"c-reload","subscriber":"u-1"}"#,
    );
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("From the second provider."), "{answer}");
    let journal = mock.journal();
    assert_eq!(journal.len(), 1, "{journal:#?}");
    assert_eq!(journal[0]["path"], "/anthropic/v1/messages");
    assert_eq!(journal[0]["body"]["model"], mock.other_model("second"));

    // A configuration with a problem changes nothing (its agent, which would run turns,
    // is not there), and the log says why.
    std::fs::write(
        setup.config(),
        format!(
            "{second}[agents.broken]\ntools = [\"weather:nope\"]\n\
             [agents.broken.turn]\nprovider = \"mock\"\n"
        ),
    )
    .unwrap();
    hangup();
    let log = served.wait_for_stderr("the configuration was not reloaded");
    assert!(log.contains("weather:nope"), "{log}");
    assert!(known("helper"));
    assert!(!known("broken"));
    drop(served);
}

#[test]
fn over_http_a_channels_conversation_id_is_refused_and_claims_nothing() {
    use std::io::Read;

    let mock = Llmock::start();
    let setup = Setup::new("http-channel-id", &mock, "openai", "", "");
    let (_served, authority) = serve(&setup, None);
    let read = |mut client: std::net::TcpStream| {
        let mut answer = String::new();
        client.read_to_string(&mut answer).unwrap();
        answer
    };
    // A fresh id of the webhook channel's form, taken first by a client of the route,
    // would lock the channel's user out of their conversation.
    let body = r#"{"message":"Hello?","conversation":"webhook:c-1"}"#;
    let answer = read(send(&authority, "POST", "/v1/agents/bot/turns", body, None));
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(
        answer.contains("marks a channel's conversations"),
        "{answer}"
    );
    let body = r#"{"conversation":"webhook:c-1"}"#;
    let answer = read(send(&authority, "POST", "/v1/agents/bot/turns", body, None));
    assert!(answer.starts_with("HTTP/1.1 400"), "a resume too: {answer}");
    // Nothing asked, nothing kept: no owner recorded for the id.
    assert!(mock.journal().is_empty(), "the model was asked");
    let database = rusqlite::Connection::open_with_flags(
        setup.dir.join("data/conversations.sqlite"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let owners: i64 = database
        .query_row("SELECT count(*) FROM owners", [], |row| row.get(0))
        .unwrap();
    assert_eq!(owners, 0, "an owner was recorded");
}

/// Issue 31 #9: a resume of a fresh id stores nothing, so it claims nothing: the id's
/// first turn that stores a message makes it its subscriber's.
#[test]
fn over_http_a_failed_resume_of_a_fresh_id_leaves_it_free_for_the_first_real_turn() {
    use std::io::Read;

    let mock = Llmock::start();
    let setup = Setup::new("http-squat", &mock, "openai", "", "");
    mock.script(json!([{"type": "reply", "text": "Hello, owner."}]));
    let (_served, authority) = serve(&setup, None);
    let read = |mut client: std::net::TcpStream| {
        let mut answer = String::new();
        client.read_to_string(&mut answer).unwrap();
        answer
    };
    let body = r#"{"conversation":"c-fresh","subscriber":"squatter"}"#;
    let answer = read(send(&authority, "POST", "/v1/agents/bot/turns", body, None));
    assert!(answer.contains("nothing to resume"), "{answer}");
    let body = r#"{"message":"Hello?","conversation":"c-fresh","subscriber":"owner"}"#;
    let answer = read(send(&authority, "POST", "/v1/agents/bot/turns", body, None));
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains(r#""reason":"answered""#), "{answer}");
    let database = rusqlite::Connection::open_with_flags(
        setup.dir.join("data/conversations.sqlite"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let owner: String = database
        .query_row(
            "SELECT subscriber FROM owners WHERE conversation = 'c-fresh'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(owner, "owner");
}

#[test]
fn over_http_a_streamed_turn_holds_its_in_flight_place_until_it_ends() {
    use std::io::Read;

    let mock = Llmock::start();
    let setup = Setup::new("http-in-flight", &mock, "openai", "", "");
    mock.script(json!([
        {"type": "reply", "text": "words that never finish"},
        {"type": "stream_fault", "kind": "stall", "after_chunks": 1, "stall_seconds": 30}
    ]));
    let (_served, authority) = serve_with(&setup.config(), None, &["--max-in-flight", "1"]);
    let head = |client: &mut std::net::TcpStream| {
        let mut head = [0u8; 64];
        let read = client.read(&mut head).unwrap();
        String::from_utf8_lossy(&head[..read]).into_owned()
    };
    let body = r#"{"message":"Hello?","conversation":"c-long"}"#;
    let mut streaming = send(&authority, "POST", "/v1/agents/bot/turns", body, None);
    let answer = head(&mut streaming);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    // The head is sent and the turn streams on, its model stalled: it is still in flight.
    wait_until_asked(&mock);
    let body = r#"{"message":"Hello?","conversation":"c-other"}"#;
    let mut second = send(&authority, "POST", "/v1/agents/bot/turns", body, None);
    let answer = head(&mut second);
    assert!(
        answer.starts_with("HTTP/1.1 503"),
        "a second request while the first turn streams: {answer}"
    );
    // Its client goes: the turn is cancelled, and its place is free again.
    drop(streaming);
    let started = Instant::now();
    loop {
        let mut client = send(&authority, "GET", "/v1/conversations/c-long", "", None);
        let answer = head(&mut client);
        if !answer.starts_with("HTTP/1.1 503") {
            assert!(answer.starts_with("HTTP/1.1 "), "{answer}");
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the ended turn still holds its place"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn past_the_last_request_a_reply_with_calls_is_stored_as_the_hooks_leave_it() {
    let mock = Llmock::start();
    let setup = Setup::new("limit-hooks", &mock, "openai", "", "max_model_requests = 1");
    // The only request offers no tool; the model calls one anyway, with corrupted words.
    // The guard would replay them, but the turn has no request left for a replay (a
    // second reply is scripted, so that one would be answered): it replaces them with
    // its apology at once.
    mock.script(json!([
        {"type": "reply", "text": "Rome \u{fffd} rejected", "tool_calls": [weather("Rome")]},
        {"type": "reply", "text": "Rome \u{fffd} again"}
    ]));
    let (events, output) = setup.turn(&["Weather?", "--conversation", "c-guarded"]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(done(&events)["stop"]["reason"], "replaced", "{events:#?}");
    let database = rusqlite::Connection::open(setup.dir.join("data/conversations.sqlite")).unwrap();
    let stored: Vec<String> = database
        .prepare("SELECT body FROM messages WHERE conversation = 'c-guarded' ORDER BY seq")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let history = stored.join("\n");
    assert!(
        !history.contains("rejected")
            && !history.contains('\u{fffd}')
            && !history.contains("\\ufffd"),
        "a reply the guard did not pass is in the history: {history}"
    );
    assert!(
        history.contains(guard::APOLOGY),
        "the guard's replacement is not what was stored: {history}"
    );
    // Issue 31 #6: a regeneration is a model request, and the turn had one.
    assert_eq!(done(&events)["model_requests"], 1, "{events:#?}");
    assert_eq!(
        mock.journal().len(),
        1,
        "regenerated past max_model_requests"
    );
}

/// Issue 31 #8: the turn's own model requests are under a dollar cap, checked with each
/// request's worst case before it is sent: a cap too small for one sends none, and the
/// turn says so.
#[test]
fn a_turn_whose_spend_cap_has_no_room_for_a_request_sends_none() {
    let mock = Llmock::start();
    let setup = Setup::new("spend-cap", &mock, "openai", "", "spend_cap_usd = 0.000001");
    mock.script(json!([{"type": "reply", "text": "Too dear."}]));
    let (events, output) = setup.turn(&["Hello?", "--conversation", "c-dear"]);
    assert!(!output.status.success(), "{output:?}");
    let stop = &done(&events)["stop"];
    assert_eq!(stop["reason"], "limit", "{events:#?}");
    assert_eq!(stop["limit"], "spend", "{events:#?}");
    let error = of_type(&events, "error");
    assert!(
        error[0]["message"].as_str().unwrap().contains("spend cap"),
        "{events:#?}"
    );
    assert!(mock.journal().is_empty(), "a request was sent");
}

/// The README's first conversation, as written there: its llmock script, posted through
/// this test's llmock, and its `turn` command on `examples/turns.toml` (pointed at that
/// llmock), in a scratch directory; the weather tool it scripts must succeed.
#[test]
fn the_readme_s_first_conversation_calls_the_weather_tool_and_it_succeeds() {
    let readme = include_str!("../../../../README.md");
    let script = readme
        .split_once("curl -s localhost:8000/_llmock/scenario")
        .and_then(|(_, rest)| rest.split_once(" -d '"))
        .and_then(|(_, rest)| rest.split_once('\''))
        .map(|(script, _)| script)
        .expect("the README scripts llmock with curl");
    let script: Value = serde_json::from_str(script).expect("the README's script is JSON");
    let message = readme
        .split_once("--agent assistant turn \"")
        .and_then(|(_, rest)| rest.split_once('"'))
        .map(|(message, _)| message)
        .expect("the README runs a turn");
    let scripted_reply = script["behaviors"][1]["text"].as_str().unwrap().to_owned();

    let mock = Llmock::start();
    mock.script(script["behaviors"].clone());
    let dir = std::env::temp_dir().join(format!("engine-readme-turn-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // The README's llmock (port 8000) is the one examples/turns.toml names.
    let example = include_str!("../../../turns.toml");
    let (url, model) = ("http://127.0.0.1:8000/v1", "model = \"gpt-4o-mini\"");
    assert!(
        example.contains(url) && example.contains(model),
        "{example}"
    );
    let config = example
        .replace(url, &mock.openai_url())
        .replace(model, &format!("model = {:?}", mock.model()));
    std::fs::write(dir.join("turns.toml"), config).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_engine"))
        .args([
            "--config",
            "turns.toml",
            "--agent",
            "assistant",
            "turn",
            message,
        ])
        .current_dir(&dir)
        .env_remove("RUST_LOG")
        .output()
        .expect("the engine runs");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(output.status.success(), "{output:?}");
    let events: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("each line is JSON"))
        .collect();
    let results = of_type(&events, "tool_result");
    assert_eq!(results.len(), 1, "{events:#?}");
    assert_eq!(results[0]["status"], "ok", "{events:#?}");
    assert_eq!(
        of_type(&events, "tool_call")[0]["tool_id"],
        "weather:weather"
    );
    assert_eq!(of_type(&events, "chat")[0]["text"], scripted_reply.as_str());
    assert_eq!(done(&events)["stop"]["reason"], "answered");
}

#[test]
fn engine_chat_shows_each_calls_arguments_on_one_line_and_how_it_ended() {
    let mock = Llmock::start();
    let setup = Setup::new("chat-arguments", &mock, "openai", "", "");
    let long_city = format!("\u{1b}[2J{}", "x".repeat(120));
    let script = json!([
        {"type": "reply", "tool_calls": [
            {"name": "weather__weather", "arguments": {"city": "Rome", "days": 1, "units": null}},
            {"name": "weather__weather", "arguments": {"city": long_city, "days": 1, "units": null}},
            {"name": "weather__weather", "arguments": {"city": "Oslo", "days": "two", "units": null}}
        ]},
        {"type": "reply", "text": "Sunny in Rome."}
    ]);
    mock.script(script.clone());
    let shown = chat(&setup, &[], "Weather?\n");
    let rome = r#"weather__weather {"city":"Rome","days":1,"units":null}"#;
    assert!(shown.contains(&format!("  ⋯ {rome}\n")), "{shown}");
    let ended = shown
        .lines()
        .find(|line| line.contains(&format!("✓ {rome} ok in ")))
        .unwrap_or_else(|| panic!("no line for Rome's result:\n{shown}"));
    assert!(ended.ends_with(" ms"), "{ended}");
    // Long arguments are cut to one line of 80 characters, and the model's escape
    // sequence is shown escaped, never sent to the terminal.
    let cut = format!(
        r#"weather__weather {{"city":"\u001b[2J{}…"#,
        "x".repeat(80 - r#"{"city":"\u001b[2J"#.len())
    );
    assert!(shown.contains(&format!("  ⋯ {cut}\n")), "{shown}");
    assert!(!shown.contains('\u{1b}'), "{shown:?}");
    // A call that failed says so, with why.
    let oslo = r#"weather__weather {"city":"Oslo","days":"two","units":null}"#;
    let failed = shown
        .lines()
        .find(|line| line.contains(&format!("✗ {oslo} error in ")))
        .unwrap_or_else(|| panic!("no line for Oslo's result:\n{shown}"));
    assert!(
        failed.contains(" ms: ") && failed.contains("`days`"),
        "{failed}"
    );
    assert!(shown.contains("Sunny in Rome."), "{shown}");

    // In full with the flag: every character of the arguments, indented under the call.
    mock.script(script);
    let shown = chat(&setup, &["--full-arguments"], "Weather?\n");
    assert!(
        shown.contains(&format!(
            "      \"city\": \"\\u001b[2J{}\",\n",
            "x".repeat(120)
        )),
        "{shown}"
    );
}
