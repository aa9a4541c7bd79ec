//! Staged actions and channels against llmock, with the example `contacts` plugin, whose
//! action appends a JSON line to a file-backed CRM (the `crm_book` secret), and the
//! example `webhook` channel. The engine runs as a process; the CRM file, the
//! conversation store and llmock's journal show what was performed and what was sent.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::turn_setup::{chat, done, last_tool_answer, of_type, read_request, send, serve, Setup};
use serde_json::{json, Value};
use test_support::llmock::Llmock;

/// One test's llmock, scratch directory (removed when the test ends) and setup, whose
/// agent `bot` keeps its CRM book at `crm` (and has `extra` TOML lines in its turn's
/// table).
struct Case {
    mock: Llmock,
    dir: PathBuf,
    crm: PathBuf,
    setup: Setup,
}

impl Case {
    fn new(name: &str, extra: &str) -> Self {
        Self::with_book(name, "crm.jsonl", extra)
    }

    /// A case whose CRM book is at `book` in the scratch directory.
    fn with_book(name: &str, book: &str, extra: &str) -> Self {
        let mock = Llmock::start();
        let dir =
            std::env::temp_dir().join(format!("engine-actions-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let crm = dir.join(book);
        let lines = format!("{extra}\n[agents.bot.secrets]\ncrm_book = {crm:?}\n");
        let setup = Setup::new(name, &mock, "openai", "", &lines);
        Self {
            mock,
            dir,
            crm,
            setup,
        }
    }
}

impl Drop for Case {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn log_contact(outcome: &str, note: &str) -> Value {
    json!({
        "name": "contacts__log_contact",
        "arguments": {"outcome": outcome, "call_back": null, "note": note}
    })
}

/// The records in the CRM book (none when it does not exist).
fn crm_records(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect()
}

/// `(action, state, detail)` of each action the store holds for `conversation`.
fn stored_actions(setup: &Setup, conversation: &str) -> Vec<(String, String, Option<String>)> {
    let database = rusqlite::Connection::open(setup.dir.join("data/conversations.sqlite")).unwrap();
    let mut statement = database
        .prepare("SELECT action, state, detail FROM actions WHERE conversation = ?1 ORDER BY id")
        .unwrap();
    statement
        .query_map([conversation], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn kinds(events: &[Value]) -> Vec<&str> {
    events
        .iter()
        .map(|event| event["type"].as_str().unwrap())
        .collect()
}

#[test]
fn a_staged_action_is_performed_after_the_reply_for_the_turns_subscriber() {
    let case = Case::new("performed", "");
    let Case {
        mock, crm, setup, ..
    } = &case;
    mock.script(json!([
        {"type": "reply", "tool_calls": [log_contact("call_back", "Wants prices.")]},
        {"type": "reply", "text": "I am logging your request."}
    ]));
    let (events, output) = setup.turn(&[
        "Call me back",
        "--conversation",
        "c-1",
        "--subscriber",
        "u-42",
    ]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        kinds(&events),
        [
            "tool_call",
            "tool_result",
            "action_staged",
            "chat",
            "action_performed",
            "done"
        ],
        "{events:#?}"
    );
    assert_eq!(done(&events)["stop"]["reason"], "answered");
    // The model read that the action is staged, not done.
    let journal = mock.journal();
    let answer = &journal[1]["body"]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["content"];
    assert!(answer.as_str().unwrap().contains("staged"), "{answer}");
    let records = crm_records(crm);
    assert_eq!(
        records,
        [
            json!({"customer": "u-42", "outcome": "call_back", "call_back": null, "note": "Wants prices."})
        ]
    );
    // The stored answer to the call says what became of it, for the next turn's model.
    let database = rusqlite::Connection::open(setup.dir.join("data/conversations.sqlite")).unwrap();
    let answer: String = database
        .query_row(
            "SELECT body FROM messages WHERE conversation = 'c-1' AND seq = 2",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert!(answer.contains(r#"\"outcome\":\"performed\""#), "{answer}");
    let performed = &of_type(&events, "action_performed")[0];
    assert_eq!(performed["action"], "contacts:log_contact");
    assert_eq!(performed["result"]["customer"], "u-42");
    assert_eq!(
        stored_actions(setup, "c-1"),
        [(
            "contacts:log_contact".to_owned(),
            "performed".to_owned(),
            Some(records[0].to_string())
        )]
    );
}

#[test]
fn the_subscriber_an_action_receives_is_the_turns_whatever_the_model_sends() {
    let case = Case::new("subscriber", "");
    let Case {
        mock, crm, setup, ..
    } = &case;
    let mut smuggled = log_contact("interested", "For u-999.");
    smuggled["arguments"]["subscriber"] = json!("u-999");
    mock.script(json!([
        {"type": "reply", "tool_calls": [smuggled]},
        {"type": "reply", "tool_calls": [log_contact("interested", "For customer u-999, not this one.")]},
        {"type": "reply", "text": "Logged for you."}
    ]));
    let (events, output) = setup.turn(&["Hi", "--conversation", "c-2", "--subscriber", "u-42"]);
    assert!(output.status.success(), "{output:?}");
    let results = of_type(&events, "tool_result");
    assert_eq!(results[0]["status"], "error", "{events:#?}");
    assert!(
        results[0]["error"].as_str().unwrap().contains("subscriber"),
        "the arguments the schema does not list are refused: {events:#?}"
    );
    assert_eq!(of_type(&events, "action_staged").len(), 1, "{events:#?}");
    let records = crm_records(crm);
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["customer"], "u-42");
    let database = rusqlite::Connection::open(setup.dir.join("data/conversations.sqlite")).unwrap();
    let stored: String = database
        .query_row(
            "SELECT subscriber FROM actions WHERE conversation = 'c-2'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(stored, "u-42");
    // The model is never offered a way to name the subscriber.
    let tools = mock.journal()[0]["body"]["tools"].clone();
    let action = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["function"]["name"] == "contacts__log_contact")
        .expect("the action is in the catalog");
    let properties = action["function"]["parameters"]["properties"]
        .as_object()
        .unwrap();
    assert_eq!(
        properties.keys().collect::<Vec<_>>(),
        ["outcome", "call_back", "note"]
    );
}

#[test]
fn identical_stagings_in_one_turn_are_performed_once() {
    let case = Case::new("identical", "");
    let Case {
        mock, crm, setup, ..
    } = &case;
    // The third call writes the same arguments in another key order: the same staging.
    let reordered = json!({
        "name": "contacts__log_contact",
        "arguments": {"note": "Same.", "call_back": null, "outcome": "interested"}
    });
    mock.script(json!([
        {"type": "reply", "tool_calls": [log_contact("interested", "Same."), log_contact("interested", "Same.")]},
        {"type": "reply", "tool_calls": [reordered]},
        {"type": "reply", "text": "Logged."}
    ]));
    let (events, output) = setup.turn(&["Hi", "--conversation", "c-3"]);
    assert!(output.status.success(), "{output:?}");
    let results = of_type(&events, "tool_result");
    assert_eq!(results.len(), 3, "{events:#?}");
    for result in &results {
        assert_eq!(result["status"], "ok", "{events:#?}");
    }
    for repeated in &results[1..] {
        let note = repeated["result"]["note"].as_str().unwrap();
        assert!(note.contains("already staged"), "{note}");
    }
    assert_eq!(of_type(&events, "action_staged").len(), 1, "{events:#?}");
    assert_eq!(of_type(&events, "action_performed").len(), 1, "{events:#?}");
    assert_eq!(crm_records(crm).len(), 1);
    assert_eq!(stored_actions(setup, "c-3").len(), 1);
}

#[test]
fn stagings_past_the_cap_are_refused_so_the_model_can_tell_the_user() {
    let case = Case::new("cap", "max_actions_per_turn = 1");
    let Case {
        mock, crm, setup, ..
    } = &case;
    mock.script(json!([
        {"type": "reply", "tool_calls": [log_contact("interested", "First."), log_contact("call_back", "Second.")]},
        {"type": "reply", "text": "I logged the first; the second could not be done."}
    ]));
    let (events, output) = setup.turn(&["Hi", "--conversation", "c-4"]);
    assert!(output.status.success(), "{output:?}");
    let results = of_type(&events, "tool_result");
    assert_eq!(results[0]["status"], "ok");
    assert_eq!(results[1]["status"], "error");
    let refusal = results[1]["error"].as_str().unwrap();
    assert!(
        refusal.contains("not staged") && refusal.contains("1 action"),
        "{refusal}"
    );
    // The model read the refusal in its next request.
    let journal = mock.journal();
    let messages = journal[1]["body"]["messages"].as_array().unwrap();
    assert!(
        messages.last().unwrap()["content"]
            .as_str()
            .unwrap()
            .contains("not staged"),
        "{messages:#?}"
    );
    let records = crm_records(crm);
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["note"], "First.");
}

#[test]
fn a_regeneration_drops_its_actions_and_a_replaced_reply_performs_none() {
    let case = Case::new("replaced", "");
    let Case {
        mock, crm, setup, ..
    } = &case;
    // The guard plugin replays a corrupted reply twice, then replaces it.
    mock.script(json!([
        {"type": "reply", "tool_calls": [log_contact("interested", "First try.")]},
        {"type": "reply", "text": "Logged \u{fffd}\u{fffd}"},
        {"type": "reply", "text": "Logged \u{fffd}"},
        {"type": "reply", "tool_calls": [log_contact("interested", "Third try.")]},
        {"type": "reply", "text": "\u{fffd}"}
    ]));
    let (events, output) = setup.turn(&["Hi", "--conversation", "c-5"]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(done(&events)["stop"]["reason"], "replaced", "{events:#?}");
    let dropped = of_type(&events, "action_dropped");
    assert_eq!(dropped.len(), 2, "{events:#?}");
    assert!(
        dropped[0]["reason"]
            .as_str()
            .unwrap()
            .contains("regenerated"),
        "{dropped:#?}"
    );
    assert_eq!(
        dropped[1]["reason"],
        "the reply was replaced by the hook `guard:dirty_output_guard`"
    );
    assert!(of_type(&events, "action_performed").is_empty());
    assert!(!crm.exists(), "nothing was performed");
    assert!(stored_actions(setup, "c-5").is_empty());
    // The regenerated request told the model its staged action was dropped: its call's
    // answer says so, not "staged".
    let journal = mock.journal();
    let answers: Vec<&str> = journal[2]["body"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "tool")
        .map(|message| message["content"].as_str().unwrap())
        .collect();
    assert_eq!(answers.len(), 1, "{:#?}", journal[2]["body"]);
    assert!(answers[0].contains(r#""outcome":"dropped""#), "{answers:?}");
    // And the stored history keeps what became of each call.
    let database = rusqlite::Connection::open(setup.dir.join("data/conversations.sqlite")).unwrap();
    let stored: Vec<String> = database
        .prepare("SELECT body FROM messages WHERE conversation = 'c-5' AND body LIKE '%\"role\":\"tool\"%' ORDER BY seq")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(stored.len(), 2, "{stored:#?}");
    assert!(
        stored.iter().all(|body| body.contains("dropped")),
        "{stored:#?}"
    );
}

#[test]
fn a_regenerated_reply_that_passes_performs_only_what_it_staged_afresh() {
    let case = Case::new("regenerated", "");
    let Case {
        mock, crm, setup, ..
    } = &case;
    mock.script(json!([
        {"type": "reply", "tool_calls": [log_contact("interested", "First.")]},
        {"type": "reply", "text": "Logged \u{fffd}"},
        {"type": "reply", "tool_calls": [log_contact("call_back", "Second.")]},
        {"type": "reply", "text": "Logged."}
    ]));
    let (events, output) = setup.turn(&["Hi", "--conversation", "c-9"]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(done(&events)["stop"]["reason"], "answered", "{events:#?}");
    let dropped = of_type(&events, "action_dropped");
    assert_eq!(dropped.len(), 1, "{events:#?}");
    assert!(dropped[0]["reason"]
        .as_str()
        .unwrap()
        .contains("regenerated"));
    assert_eq!(of_type(&events, "action_performed").len(), 1, "{events:#?}");
    let records = crm_records(crm);
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["note"], "Second.");
}

#[test]
fn a_failed_perform_is_recorded_and_never_retried() {
    let case = Case::with_book("failed", "missing/crm.jsonl", "");
    let Case {
        mock, crm, setup, ..
    } = &case;
    mock.script(json!([
        {"type": "reply", "tool_calls": [log_contact("interested", "Try once.")]},
        {"type": "reply", "text": "Logging it."},
        {"type": "reply", "text": "Hello again."}
    ]));
    let (events, output) = setup.turn(&["Hi", "--conversation", "c-6"]);
    assert!(output.status.success(), "{output:?}");
    let failed = of_type(&events, "action_failed");
    assert_eq!(failed.len(), 1, "{events:#?}");
    assert_eq!(failed[0]["outcome"], "failed");
    assert!(
        failed[0]["error"]
            .as_str()
            .unwrap()
            .contains("could not be written"),
        "{failed:#?}"
    );
    // Now the write would succeed: nothing retries it.
    std::fs::create_dir_all(crm.parent().unwrap()).unwrap();
    let (events, output) = setup.turn(&["Anything else?", "--conversation", "c-6"]);
    assert!(output.status.success(), "{output:?}");
    assert!(
        !kinds(&events)
            .iter()
            .any(|kind| kind.starts_with("action_")),
        "{events:#?}"
    );
    assert!(!crm.exists(), "the failed action was not performed again");
    let stored = stored_actions(setup, "c-6");
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].1, "failed");
}

/// Kills the engine process it holds when dropped, so that a failed test leaves none.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `engine turn` in `conversation`, whose action's perform hangs once it is recorded
/// (returned then): the CRM book is made a FIFO with no reader, which blocks a writer
/// opening it until the engine is killed. (The case's turns need a `tool_timeout_ms` far
/// beyond the test's, and llmock a script that stages the action and then replies.)
#[cfg(unix)]
fn performing_on_a_fifo(case: &Case, conversation: &str) -> KillOnDrop {
    let made = Command::new("mkfifo")
        .arg(&case.crm)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let engine = Command::new(env!("CARGO_BIN_EXE_engine"))
        .arg("--config")
        .arg(case.setup.config())
        .args([
            "--agent",
            "bot",
            "turn",
            "Hi",
            "--conversation",
            conversation,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let engine = KillOnDrop(engine);
    let started = Instant::now();
    while stored_actions_if_any(&case.setup, conversation).is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the action was never recorded"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    engine
}

#[cfg(unix)]
#[test]
fn an_engine_killed_mid_perform_leaves_the_action_unknown_and_never_performs_it_again() {
    // A timeout far beyond the test's: the perform stays under way until the kill.
    let case = Case::new("killed", "tool_timeout_ms = 600000");
    let Case {
        mock, crm, setup, ..
    } = &case;
    mock.script(json!([
        {"type": "reply", "tool_calls": [log_contact("interested", "Only once.")]},
        {"type": "reply", "text": "Logging it."},
        {"type": "reply", "text": "Hello again."},
        {"type": "reply", "text": "Back in c-7."}
    ]));
    let mut engine = performing_on_a_fifo(&case, "c-7");
    assert_eq!(stored_actions(setup, "c-7")[0].1, "performing");
    engine.0.kill().unwrap();
    engine.0.wait().unwrap();
    // The book is a plain file again: a perform now would write to it.
    std::fs::remove_file(crm).unwrap();
    std::fs::write(crm, "").unwrap();
    // The next engine marks it at start-up, whichever conversation it serves first.
    let (events, output) = setup.turn(&["Are you there?", "--conversation", "c-8"]);
    assert!(output.status.success(), "{output:?}");
    assert!(
        !kinds(&events)
            .iter()
            .any(|kind| kind.starts_with("action_")),
        "{events:#?}"
    );
    assert_eq!(
        std::fs::read_to_string(crm).unwrap(),
        "",
        "not performed again"
    );
    let stored = stored_actions(setup, "c-7");
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].1, "unknown");
    assert!(stored[0]
        .2
        .as_deref()
        .unwrap()
        .contains("the engine stopped while it ran"));
    // The killed turn's conversation, continued: its model reads what became of the
    // action, not the "staged" the killed engine left in the history.
    let (_, output) = setup.turn(&["Did you log it?", "--conversation", "c-7"]);
    assert!(output.status.success(), "{output:?}");
    let answer = last_tool_answer(mock);
    assert!(answer.contains(r#""outcome":"unknown""#), "{answer}");
    assert_eq!(
        std::fs::read_to_string(crm).unwrap(),
        "",
        "still not performed"
    );
}

/// [`stored_actions`], or none while the engine has not created the store yet.
fn stored_actions_if_any(
    setup: &Setup,
    conversation: &str,
) -> Vec<(String, String, Option<String>)> {
    let exists = setup.dir.join("data/conversations.sqlite").exists();
    let table = exists
        && rusqlite::Connection::open(setup.dir.join("data/conversations.sqlite"))
            .and_then(|database| {
                database.query_row(
                    "SELECT count(*) FROM sqlite_master WHERE name = 'actions'",
                    [],
                    |row| row.get::<_, i64>(0),
                )
            })
            .is_ok_and(|count| count == 1);
    if table {
        stored_actions(setup, conversation)
    } else {
        Vec::new()
    }
}

#[test]
fn the_webhook_channel_runs_a_turn_over_http_behind_the_turn_routes_token_and_origin_checks() {
    use std::io::Read;

    let case = Case::new("webhook", "\n[channels.webhook]\nagent = \"bot\"");
    let Case {
        mock, crm, setup, ..
    } = &case;
    mock.script(json!([
        {"type": "reply", "tool_calls": [log_contact("call_back", "Call on Monday.")]},
        {"type": "reply", "text": "We will call you on Monday."}
    ]));
    let token = "a-token-long-enough-for-the-engine-to-accept-it-0123456789";
    let (served, authority) = serve(setup, Some(token));
    let exchange = |path: &str, body: &str, token: Option<&str>| {
        let mut answer = String::new();
        send(&authority, "POST", path, body, token)
            .read_to_string(&mut answer)
            .unwrap();
        let (head, body) = answer.split_once("\r\n\r\n").unwrap();
        (head.to_owned(), body.to_owned())
    };
    let message = r#"{"conversation":"c-web","from":"u-7","text":"Call me back"}"#;
    let (head, _) = exchange("/channels/webhook", message, None);
    assert!(head.starts_with("HTTP/1.1 401"), "{head}");
    let (head, body) = exchange("/channels/webhook", r#"{"text":"no ids"}"#, Some(token));
    assert!(
        head.starts_with("HTTP/1.1 400"),
        "the adapter refused it: {head}"
    );
    assert!(body.contains("not a webhook message"), "{body}");
    // An empty id would be one conversation every sender shares (`webhook:`).
    let empty = r#"{"conversation":"","from":"u-7","text":"Call me back"}"#;
    let (head, _) = exchange("/channels/webhook", empty, Some(token));
    assert!(head.starts_with("HTTP/1.1 400"), "an empty id: {head}");
    let (head, _) = exchange("/channels/nowhere", message, Some(token));
    assert!(head.starts_with("HTTP/1.1 404"), "{head}");
    // A browser page of another origin is refused, as on the turn route.
    let foreign = |path: &str| {
        use std::io::Write;
        let mut client = std::net::TcpStream::connect(&authority).unwrap();
        write!(
            client,
            "POST {path} HTTP/1.1\r\nhost: {authority}\r\norigin: http://evil.example\r\nauthorization: Bearer {token}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{message}",
            message.len()
        )
        .unwrap();
        let mut answer = String::new();
        client.read_to_string(&mut answer).unwrap();
        answer.lines().next().unwrap_or_default().to_owned()
    };
    assert_eq!(
        foreign("/channels/webhook"),
        foreign("/v1/agents/bot/turns"),
        "the channel answers a foreign origin as the turn route does"
    );
    assert!(foreign("/channels/webhook").starts_with("HTTP/1.1 403"));
    assert!(
        mock.journal().is_empty(),
        "no refused request reached the model"
    );

    let (head, body) = exchange("/channels/webhook", message, Some(token));
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        answer,
        json!({
            "conversation": "c-web",
            "reply": "We will call you on Monday.",
            "stop": "answered",
            "actions": [{"action": "contacts:log_contact", "outcome": "performed"}]
        })
    );
    assert_eq!(crm_records(crm)[0]["customer"], "u-7");

    let mut history = String::new();
    send(
        &authority,
        "GET",
        "/v1/conversations/webhook:c-web",
        "",
        Some(token),
    )
    .read_to_string(&mut history)
    .unwrap();
    let history: Value =
        serde_json::from_str(history.split_once("\r\n\r\n").unwrap().1.trim()).unwrap();
    assert_eq!(history["actions"][0]["state"], "performed", "{history:#}");
    assert_eq!(history["actions"][0]["subscriber"], "u-7");
    drop(served);
}

#[test]
fn a_channel_turn_while_another_of_its_conversation_runs_is_a_409_the_adapter_never_sees() {
    use std::io::Read;

    let case = Case::new("webhook-busy", "\n[channels.webhook]\nagent = \"bot\"");
    let Case { mock, setup, .. } = &case;
    mock.script(json!([
        {"type": "reply", "text": "slow words"},
        {"type": "stream_fault", "kind": "stall", "after_chunks": 1, "stall_seconds": 30}
    ]));
    let (served, authority) = serve(setup, None);
    let message = r#"{"conversation":"c-twice","from":"u-7","text":"Call me back"}"#;
    let running = send(&authority, "POST", "/channels/webhook", message, None);
    // The first turn took the script, and stalls in the model's stream.
    let started = Instant::now();
    while !mock.pending().is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the first turn never began"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // A reply is queued for the second turn, which a model request would take.
    mock.script(json!([{"type": "reply", "text": "never asked for"}]));
    let mut answer = String::new();
    send(&authority, "POST", "/channels/webhook", message, None)
        .read_to_string(&mut answer)
        .unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 409"), "{answer}");
    assert!(
        body.contains("a turn of the conversation `webhook:c-twice` is under way"),
        "the engine's problem, not the adapter's answer: {body}"
    );
    assert_eq!(
        mock.pending().len(),
        1,
        "the refused turn asked no model: the reply queued for it is still there"
    );
    drop(running);
    // The first turn, cancelled with its client, stores its message.
    while stored_user_messages(setup, "webhook:c-twice").is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(40),
            "the first turn never ended"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(served);
    assert_eq!(
        stored_user_messages(setup, "webhook:c-twice"),
        ["Call me back"],
        "the refused turn stored nothing"
    );
}

/// The contents of `conversation`'s stored user messages, oldest first; none when the
/// store or the conversation is not there yet.
fn stored_user_messages(setup: &Setup, conversation: &str) -> Vec<String> {
    let Ok(database) = rusqlite::Connection::open_with_flags(
        setup.dir.join("data/conversations.sqlite"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    ) else {
        return Vec::new();
    };
    let Ok(mut query) =
        database.prepare("SELECT body FROM messages WHERE conversation = ?1 ORDER BY seq")
    else {
        return Vec::new();
    };
    query
        .query_map([conversation], |row| row.get::<_, String>(0))
        .unwrap()
        .map(|body| serde_json::from_str::<Value>(&body.unwrap()).unwrap())
        .filter(|message| message["role"] == "user")
        .map(|message| message["content"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_channel_turn_ends_at_the_agents_deadline() {
    use std::io::Read;

    let case = Case::new(
        "webhook-deadline",
        "deadline_secs = 1\n[channels.webhook]\nagent = \"bot\"",
    );
    let Case {
        mock, crm, setup, ..
    } = &case;
    // One reply stages an action; the next calls a command tool that outlasts the
    // deadline.
    let tools_d = setup.dir.join("tools.d");
    std::fs::create_dir_all(&tools_d).unwrap();
    std::fs::write(
        tools_d.join("wait.json"),
        json!({
            "namespace": "local",
            "name": "wait",
            "description": "Waits for longer than the turn has.",
            "input_schema": { "type": "object", "properties": {}, "additionalProperties": false },
            "command": ["sh", "-c", "sleep 30; echo '{}'"]
        })
        .to_string(),
    )
    .unwrap();
    mock.script(json!([
        {"type": "reply", "tool_calls": [log_contact("interested", "Call me back.")]},
        {"type": "reply", "tool_calls": [{"name": "local__wait", "arguments": {}}]}
    ]));
    let (served, authority) = serve(setup, None);
    let message = r#"{"conversation":"c-slow","from":"u-7","text":"Call me back"}"#;
    let started = Instant::now();
    let mut answer = String::new();
    send(&authority, "POST", "/channels/webhook", message, None)
        .read_to_string(&mut answer)
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "the deadline did not cut it"
    );
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    assert!(
        head.starts_with("HTTP/1.1 504"),
        "the adapter's status: {head}"
    );
    let answer: Value = serde_json::from_str(body).unwrap();
    assert_eq!(answer["stop"], "deadline", "{answer:#}");
    assert_eq!(answer["reply"], "");
    // The action was staged, and the turn cut at its deadline dropped it, performing
    // nothing.
    assert_eq!(mock.journal().len(), 2);
    assert!(!crm.exists(), "nothing was performed");
    assert!(
        stored_actions_if_any(setup, "webhook:c-slow").is_empty(),
        "an action was claimed"
    );
    let database = rusqlite::Connection::open(setup.dir.join("data/conversations.sqlite")).unwrap();
    let answers: Vec<String> = database
        .prepare("SELECT body FROM messages WHERE conversation = 'webhook:c-slow' AND body LIKE '%\"role\":\"tool\"%' ORDER BY seq")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let staged: Vec<Value> = answers
        .iter()
        .map(|body| serde_json::from_str::<Value>(body).unwrap())
        .filter(|answer| answer["name"] == "contacts__log_contact")
        .map(|answer| serde_json::from_str(answer["content"].as_str().unwrap()).unwrap())
        .collect();
    assert_eq!(
        staged,
        [json!({
            "action": "contacts:log_contact",
            "outcome": "dropped",
            "reason": "the turn's deadline passed before the reply"
        })],
        "the staged call's answer says it was dropped: {answers:#?}"
    );
    drop(served);
}

#[test]
fn engine_chat_shows_each_action_as_it_is_staged_and_performed() {
    let case = Case::new("chat", "");
    let Case {
        mock, crm, setup, ..
    } = &case;
    mock.script(json!([
        {"type": "reply", "tool_calls": [log_contact("call_back", "Monday.")]},
        {"type": "reply", "text": "I am logging it."}
    ]));
    let shown = chat(setup, &[], "Call me back\n");
    let staged = shown
        .find("contacts__log_contact")
        .map(|_| shown.find("contacts:log_contact staged: performed after the reply"));
    let performed = shown.find("contacts:log_contact performed in");
    let reply = shown.find("I am logging it.");
    assert!(
        matches!((staged, reply, performed), (Some(Some(s)), Some(r), Some(p)) if s < r && r < p),
        "staged, then the reply, then performed:\n{shown}"
    );
    assert_eq!(crm_records(crm).len(), 1);
}

/// An OpenAI-compatible server whose calls carry no id (some servers send none: the
/// engine then names them `call_0`, ... in every reply, so ids repeat across turns). It
/// answers each request with the next of `replies`, streamed: a text, a call (`name`,
/// `arguments`), or `null` to hang with the request unanswered, which it tells `asked`.
/// Gives its base URL and every request body it received.
fn id_less_server(
    replies: Vec<Value>,
    asked: std::sync::mpsc::Sender<usize>,
) -> (String, std::sync::Arc<std::sync::Mutex<Vec<Value>>>) {
    use std::io::Write;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let bodies = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let received = std::sync::Arc::clone(&bodies);
    std::thread::spawn(move || {
        let mut replies = replies.into_iter();
        let mut hanging = Vec::new();
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let (_, body) = read_request(&stream);
            let index = {
                let mut bodies = received.lock().unwrap();
                bodies.push(serde_json::from_slice(&body).unwrap_or(Value::Null));
                bodies.len() - 1
            };
            let reply = replies
                .next()
                .unwrap_or(json!({"text": "(no more script)"}));
            if reply.is_null() {
                let _ = asked.send(index);
                hanging.push(stream);
                continue;
            }
            let (delta, finish) = match reply.get("text") {
                Some(text) => (json!({"content": text}), "stop"),
                None => (
                    json!({"tool_calls": [{"index": 0, "type": "function", "function": {
                        "name": reply["name"], "arguments": reply["arguments"].to_string()
                    }}]}),
                    "tool_calls",
                ),
            };
            let chunks = [
                json!({"choices": [{"index": 0, "delta": delta}]}),
                json!({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}),
                json!({"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10}}),
            ];
            let mut answer = String::from(
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n",
            );
            for chunk in chunks {
                answer.push_str(&format!("data: {chunk}\n\n"));
            }
            answer.push_str("data: [DONE]\n\n");
            let _ = stream.write_all(answer.as_bytes());
        }
    });
    (url, bodies)
}

/// Issue 31 #4: turn 1 performs `call_0`; turn 2 stages `call_0` and the engine is
/// killed before its reply; turn 3 must read that turn 2's action was dropped, not the
/// outcome of turn 1's action that had the same call id.
#[cfg(unix)]
#[test]
fn a_staging_left_behind_is_settled_by_its_own_record_not_one_with_the_same_call_id() {
    let dir = std::env::temp_dir().join(format!("engine-actions-ids-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let crm = dir.join("crm.jsonl");
    let call = |note: &str| json!({"name": "contacts__log_contact", "arguments": {"outcome": "interested", "call_back": null, "note": note}});
    let (asked, hung) = std::sync::mpsc::channel();
    let (url, bodies) = id_less_server(
        vec![
            call("First."),
            json!({"text": "Logged."}),
            call("Second."),
            Value::Null,
            json!({"text": "About that second one..."}),
        ],
        asked,
    );
    let config = dir.join("engine.toml");
    std::fs::write(
        &config,
        format!(
            "data_dir = {data:?}\n\
             [providers.idless]\nwire = \"openai\"\nbase_url = {url:?}\nmodel = \"m\"\n\
             [agents.bot.turn]\nprovider = \"idless\"\n\
             [agents.bot.secrets]\ncrm_book = {crm:?}\n",
            data = dir.join("data"),
        ),
    )
    .unwrap();
    let turn = |message: &str| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_engine"));
        command.arg("--config").arg(&config).args([
            "--agent",
            "bot",
            "turn",
            message,
            "--conversation",
            "c-ids",
        ]);
        command
    };
    let first = turn("Log the first.").output().unwrap();
    assert!(first.status.success(), "{first:?}");
    assert_eq!(crm_records(&crm).len(), 1, "the first action was performed");
    let second = turn("Log the second.")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut second = KillOnDrop(second);
    // The second action is staged, and the model asked for the reply: the engine dies.
    assert_eq!(hung.recv_timeout(Duration::from_secs(60)), Ok(3));
    second.0.kill().unwrap();
    second.0.wait().unwrap();
    let third = turn("Did you log the second?").output().unwrap();
    assert!(third.status.success(), "{third:?}");
    let bodies = bodies.lock().unwrap();
    let answers: Vec<&Value> = bodies[4]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "tool")
        .collect();
    assert_eq!(answers.len(), 2, "{answers:#?}");
    assert!(
        answers
            .iter()
            .all(|answer| answer["tool_call_id"] == "call_0"),
        "both turns' calls have one id: {answers:#?}"
    );
    let first_answer = answers[0]["content"].as_str().unwrap();
    assert!(
        first_answer.contains(r#""outcome":"performed""#),
        "{first_answer}"
    );
    let second_answer = answers[1]["content"].as_str().unwrap();
    assert!(
        second_answer.contains(r#""outcome":"dropped""#),
        "the model is told turn 2's action was not done: {second_answer}"
    );
    assert_eq!(
        crm_records(&crm).len(),
        1,
        "the second action was never performed"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 31 #3: two processes on one data directory. While one performs an action in a
/// conversation, the other refuses a turn of that conversation as busy (it would have
/// stored a second step and performed again), and its first use of the store leaves the
/// live process's perform alone; once the first process is gone, its turn is taken over
/// and its perform marked unknown, never run again.
#[cfg(unix)]
#[test]
fn a_second_process_on_one_data_directory_never_runs_a_conversation_the_first_holds() {
    let case = Case::new("two-processes", "tool_timeout_ms = 600000");
    let Case {
        mock, crm, setup, ..
    } = &case;
    mock.script(json!([
        {"type": "reply", "tool_calls": [log_contact("interested", "Only once.")]},
        {"type": "reply", "text": "Logging it."},
        {"type": "reply", "text": "Another conversation."},
        {"type": "reply", "text": "Back in c-two."}
    ]));
    let mut first = performing_on_a_fifo(&case, "c-two");
    let (events, output) = setup.turn(&["Me too", "--conversation", "c-two"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stop = &done(&events)["stop"];
    assert_eq!(stop["reason"], "busy", "{events:#?}");
    assert_eq!(
        mock.journal().len(),
        2,
        "the second process asked the model"
    );
    let (_, output) = setup.turn(&["Elsewhere", "--conversation", "c-other"]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        stored_actions(setup, "c-two")[0].1,
        "performing",
        "the second process marked a live perform"
    );
    first.0.kill().unwrap();
    first.0.wait().unwrap();
    std::fs::remove_file(crm).unwrap();
    std::fs::write(crm, "").unwrap();
    let (events, output) = setup.turn(&["Still there?", "--conversation", "c-two"]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(done(&events)["stop"]["reason"], "answered", "{events:#?}");
    let stored = stored_actions(setup, "c-two");
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].1, "unknown");
    assert_eq!(std::fs::read_to_string(crm).unwrap(), "", "performed again");
}
