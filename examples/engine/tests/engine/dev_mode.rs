//! Dev mode (issue 35) with real processes: `engine serve`, the journal plugin's dev
//! binary (`examples/plugins/journal/examples/journal-dev.rs`) connected to it over a
//! WebSocket with a dev token, and turns against llmock that call its tools.

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use test_support::llmock::Llmock;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

use crate::turn_setup::{send, serve, Setup};

const JOURNAL_TOKEN: &str = "jt-secret-value-9876";

/// The journal plugin's dev binary, as `cargo test` built it beside this test.
fn dev_binary() -> PathBuf {
    example("journal", "journal-dev")
}

/// The example `name` of the package `package`, as `cargo test` built it beside this
/// test.
fn example(package: &str, name: &str) -> PathBuf {
    let deps = std::env::current_exe().unwrap();
    let binary = deps
        .parent()
        .and_then(|deps| deps.parent())
        .unwrap()
        .join("examples")
        .join(name);
    assert!(
        binary.exists(),
        "{} is missing: `cargo build -p {package} --example {name}` builds it",
        binary.display()
    );
    binary
}

/// [`setup`], with `turn` lines added to the agent's turn.
fn setup_with(name: &str, mock: &Llmock, turn: &str) -> Setup {
    Setup::new(
        &format!("dev-{name}"),
        mock,
        "openai",
        "",
        &format!(
            "{turn}\n[agents.bot.secrets]\njournal_token = {JOURNAL_TOKEN:?}\n\
             [agents.bot.dev]\nsecrets = [\"journal_token\"]\n"
        ),
    )
}

/// An engine serving the agent `bot` on llmock, with a dev token for it.
struct Running {
    mock: Llmock,
    setup: Setup,
    served: test_support::mcp::Served,
    authority: String,
    token: String,
}

impl Running {
    /// [`setup_with`] `name` and `turn`, served, with a token issued.
    fn start(name: &str, turn: &str) -> Self {
        Self::start_above("", name, turn)
    }

    /// [`start`](Self::start), with `top` (top-level keys) above the configuration's
    /// tables.
    fn start_above(top: &str, name: &str, turn: &str) -> Self {
        let mock = Llmock::start();
        let setup = setup_with(name, &mock, turn);
        if !top.is_empty() {
            let config = std::fs::read_to_string(setup.config()).unwrap();
            std::fs::write(setup.config(), format!("{top}{config}")).unwrap();
        }
        let (served, authority) = serve(&setup, None);
        let token = issue_token(&setup);
        Self {
            mock,
            setup,
            served,
            authority,
            token,
        }
    }
}

/// `engine dev-token issue` for the agent `bot`: the token it printed.
fn issue_token(setup: &Setup) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_engine"))
        .arg("--config")
        .arg(setup.config())
        .args([
            "--agent",
            "bot",
            "dev-token",
            "issue",
            "--ttl-minutes",
            "10",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

/// The dev binary, running, with what it printed so far.
struct Dev {
    child: Child,
    printed: Arc<Mutex<String>>,
}

impl Dev {
    fn start(authority: &str, token: &str) -> Self {
        Self::start_binary(dev_binary(), authority, token)
    }

    /// [`start`](Self::start), connected with `tool` equipped: it, and what it printed
    /// by then.
    fn equipping(authority: &str, token: &str, tool: &str) -> (Self, String) {
        let dev = Self::start(authority, token);
        let connected = dev.wait_for("Connected");
        assert!(
            listed(&connected, "equipped").contains(&tool.to_owned()),
            "{connected}"
        );
        (dev, connected)
    }

    fn start_binary(binary: PathBuf, authority: &str, token: &str) -> Self {
        Self::start_with(binary, &[], authority, token)
    }

    fn start_with(binary: PathBuf, args: &[&str], authority: &str, token: &str) -> Self {
        let mut child = Command::new(binary)
            .args(args)
            .env("ENGINE_DEV_URL", format!("http://{authority}"))
            .env("ENGINE_DEV_AGENT", "bot")
            .env("ENGINE_DEV_TOKEN", token)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let printed = Arc::new(Mutex::new(String::new()));
        let stderr = child.stderr.take().unwrap();
        let sink = Arc::clone(&printed);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let mut printed = sink.lock().unwrap();
                printed.push_str(&line);
                printed.push('\n');
            }
        });
        Self { child, printed }
    }

    /// Waits until it printed `text` `times` times; what it printed.
    fn wait_for_times(&self, text: &str, times: usize) -> String {
        let started = Instant::now();
        loop {
            let printed = self.printed.lock().unwrap().clone();
            if printed.matches(text).count() >= times {
                return printed;
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the dev binary never printed {text:?} {times} times:\n{printed}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits until it printed `text`; what it printed.
    fn wait_for(&self, text: &str) -> String {
        let started = Instant::now();
        loop {
            let printed = self.printed.lock().unwrap().clone();
            if printed.contains(text) {
                return printed;
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the dev binary never printed {text:?}:\n{printed}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Dev {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One turn of `conversation` over HTTP: its events.
fn turn(authority: &str, conversation: &str, message: &str) -> Vec<Value> {
    let body = json!({"message": message, "conversation": conversation, "subscriber": "ana"});
    let mut answer = String::new();
    send(
        authority,
        "POST",
        "/v1/agents/bot/turns",
        &body.to_string(),
        None,
    )
    .read_to_string(&mut answer)
    .unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let (_, body) = answer.split_once("\r\n\r\n").unwrap();
    body.lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event.get("type").is_some())
        .collect()
}

/// [`turn`] on a thread of its own, for a test that acts while it runs.
fn turn_in_background(
    authority: &str,
    conversation: &'static str,
    message: &'static str,
) -> std::thread::JoinHandle<Vec<Value>> {
    let authority = authority.to_owned();
    std::thread::spawn(move || turn(&authority, conversation, message))
}

fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|event| event["type"] == kind)
        .collect()
}

/// The wire names of the tools in the `n`th request llmock received.
fn offered(mock: &Llmock, n: usize) -> Vec<String> {
    mock.journal()[n]["body"]["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|tool| tool["function"]["name"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_dev_tool_reads_its_secret_keeps_state_only_on_success_and_hands_a_file_to_a_linked_tool() {
    let Running {
        mock,
        setup: _setup,
        served,
        authority,
        token,
    } = Running::start("context", "");
    let (dev, connected) = Dev::equipping(&authority, &token, "journal:write_entry");
    assert!(listed(&connected, "refused").is_empty(), "{connected}");

    // The dev tool writes an entry: its secret, its state, a file.
    mock.script(json!([
        {"type": "reply", "tool_calls": [{"name": "journal__write_entry", "arguments": {"text": "hello"}}]},
        {"type": "reply", "text": "Written."}
    ]));
    let events = turn(&authority, "c-dev", "Write hello.");
    assert!(offered(&mock, 0).contains(&"journal__write_entry".to_owned()));
    let call = of_type(&events, "tool_call")[0];
    assert_eq!(call["tool_id"], "journal:write_entry");
    assert_eq!(
        call["dev_session"].as_str(),
        Some(sessions(&connected)[0].as_str()),
        "the event names the session: {call}"
    );
    let result = of_type(&events, "tool_result")[0];
    assert_eq!(
        result["status"],
        "ok",
        "{result}\n{}\n{}",
        dev.printed.lock().unwrap(),
        served.stderr_so_far()
    );
    let written = &result["result"];
    assert_eq!(written["entries"], 1);
    assert_eq!(
        written["signed_by"], "9876",
        "the tool read its secret: {written}"
    );
    let handle = written["file"].as_str().unwrap().to_owned();

    // A linked tool of the same conversation takes the file the dev tool put.
    mock.script(json!([
        {"type": "reply", "tool_calls": [{"name": "notes__read_file", "arguments": {"handle": handle}}]},
        {"type": "reply", "text": "Read."}
    ]));
    let events = turn(&authority, "c-dev", "Read it.");
    let call = of_type(&events, "tool_call")[0];
    assert!(
        call.get("dev_session").is_none(),
        "a linked tool ran: {call}"
    );
    let result = of_type(&events, "tool_result")[0];
    assert_eq!(result["result"], "hello", "{result}");

    // A call that fails keeps none of its state; the next one counts from the last kept.
    mock.script(json!([
        {"type": "reply", "tool_calls": [{"name": "journal__write_entry", "arguments": {"text": "fail"}}]},
        {"type": "reply", "tool_calls": [{"name": "journal__write_entry", "arguments": {"text": "again"}}]},
        {"type": "reply", "text": "Done."}
    ]));
    let events = turn(&authority, "c-dev", "Write twice.");
    let results = of_type(&events, "tool_result");
    assert_eq!(results[0]["status"], "error", "{}", results[0]);
    assert!(results[0]["error"]
        .as_str()
        .unwrap()
        .contains("refused the entry"));
    assert_eq!(results[1]["result"]["entries"], 2, "{}", results[1]);
    // The secret never reached the model.
    let sent = serde_json::to_string(&mock.journal()).unwrap();
    assert!(!sent.contains(JOURNAL_TOKEN));
}

#[test]
fn a_dev_tool_reads_its_conversations_history_and_where_it_runs_through_the_bridge() {
    // The deployment's slug, which the tool keys its journal by.
    let Running {
        mock,
        setup: _setup,
        served,
        authority,
        token,
    } = Running::start_above("instance = \"acme-prod\"\n", "history", "");
    let (dev, _) = Dev::equipping(&authority, &token, "journal:recap");
    mock.script(json!([
        {"type": "reply", "tool_calls": [{"name": "journal__wait", "arguments": {"seconds": 0}}]},
        {"type": "reply", "text": "Waited."},
        {"type": "reply", "tool_calls": [{"name": "journal__recap", "arguments": {}}]},
        {"type": "reply", "text": "Recapped."}
    ]));
    turn(&authority, "c-history", "Wait a moment.");
    let events = turn(&authority, "c-history", "Recap, please.");
    let result = of_type(&events, "tool_result")[0];
    assert_eq!(
        result["status"],
        "ok",
        "{result}\n{}\n{}",
        dev.printed.lock().unwrap(),
        served.stderr_so_far()
    );
    // Where it runs: the configuration's instance, the agent, the turn route's channel
    // and the conversation's id there.
    assert_eq!(result["result"]["kept_at"], "acme-prod/bot/api/c-history");
    // What was said, up to the call that reads it.
    assert_eq!(
        result["result"]["lines"],
        json!([
            "user: Wait a moment.",
            "assistant:  (called journal__wait)",
            "assistant: Waited.",
            "user: Recap, please.",
            "assistant:  (called journal__recap)",
        ])
    );
    // Another conversation reads only its own.
    mock.script(json!([
        {"type": "reply", "tool_calls": [{"name": "journal__recap", "arguments": {}}]},
        {"type": "reply", "text": "Recapped."}
    ]));
    let events = turn(&authority, "c-other", "Recap this one.");
    let result = of_type(&events, "tool_result")[0];
    assert_eq!(
        result["result"]["lines"],
        json!([
            "user: Recap this one.",
            "assistant:  (called journal__recap)"
        ]),
        "{result}"
    );
}

#[test]
fn killing_the_dev_process_mid_call_answers_the_call_and_its_tools_leave_the_catalog() {
    let Running {
        mock,
        setup: _setup,
        served: _served,
        authority,
        token,
    } = Running::start("kill", "");
    let mut dev = Dev::start(&authority, &token);
    dev.wait_for("Connected");
    mock.script(json!([
        {"type": "reply", "tool_calls": [{"name": "journal__wait", "arguments": {"seconds": 60}}]},
        {"type": "reply", "text": "It went away."}
    ]));
    let turning = turn_in_background(&authority, "c-kill", "Wait a minute.");
    // The tool's call, not the bound hook's, which runs first in the same turn.
    dev.wait_for(r#"Called { tool: "journal:wait""#);
    dev.child.kill().unwrap();
    let started = Instant::now();
    let events = turning.join().unwrap();
    assert!(started.elapsed() < Duration::from_secs(30));
    let result = of_type(&events, "tool_result")[0];
    assert_eq!(result["status"], "error", "{result}");
    assert!(
        result["error"]
            .as_str()
            .unwrap()
            .contains("development session disconnected"),
        "{result}"
    );
    assert_eq!(events.last().unwrap()["type"], "done");
    assert!(offered(&mock, 0).contains(&"journal__wait".to_owned()));
    assert!(
        !offered(&mock, 1).contains(&"journal__wait".to_owned()),
        "the next request no longer offers the session's tools"
    );
}

/// How many calls of `tool` the dev binary was sent so far.
fn calls_of(dev: &Dev, tool: &str) -> usize {
    let printed = dev.printed.lock().unwrap().clone();
    printed
        .matches(&format!(r#"Called {{ tool: "{tool}""#))
        .count()
}

#[test]
fn a_dev_action_is_staged_by_its_own_types_and_performed_on_the_developers_machine() {
    let Running {
        mock,
        setup: _setup,
        served: _served,
        authority,
        token,
    } = Running::start("action", "");
    let (dev, connected) = Dev::equipping(&authority, &token, "journal:publish");
    // A headline longer than its `Note<40>` is refused at the stage by the action's own
    // deserializer, on the developer's machine; the model's next try is staged, and
    // performed there after the reply, with the subscriber and the secret.
    mock.script(json!([
        {"type": "reply", "tool_calls": [{"name": "journal__publish", "arguments": {"headline": "x".repeat(41)}}]},
        {"type": "reply", "tool_calls": [{"name": "journal__publish", "arguments": {"headline": "Hello"}}]},
        {"type": "reply", "text": "Publishing."}
    ]));
    let events = turn(&authority, "c-action", "Publish hello.");
    let calls = of_type(&events, "tool_call");
    assert_eq!(
        calls[0]["dev_session"].as_str(),
        Some(sessions(&connected)[0].as_str()),
        "{}",
        calls[0]
    );
    let refused = of_type(&events, "tool_result")[0];
    assert_eq!(refused["status"], "error", "{refused}");
    assert!(
        refused["error"].as_str().unwrap().contains("at most 40"),
        "{refused}"
    );
    assert_eq!(of_type(&events, "action_staged").len(), 1, "{events:#?}");
    let performed = of_type(&events, "action_performed");
    assert_eq!(performed.len(), 1, "{events:#?}");
    assert_eq!(performed[0]["action"], "journal:publish");
    let result = &performed[0]["result"];
    assert_eq!(result["headline"], "Hello", "{result}");
    assert_eq!(result["reader"], "ana", "the action read its subscriber");
    assert_eq!(result["signed_by"], "9876", "the action read its secret");
    // The dev binary's lines reach the test through a pipe and a thread: waited for.
    dev.wait_for_times(r#"Called { tool: "journal:publish""#, 3);
    assert_eq!(
        calls_of(&dev, "journal:publish"),
        3,
        "two stages and one perform went to the session"
    );

    // An action that fails where it runs is failed, and not retried.
    mock.script(json!([
        {"type": "reply", "tool_calls": [{"name": "journal__publish", "arguments": {"headline": "fail"}}]},
        {"type": "reply", "text": "Publishing."}
    ]));
    let events = turn(&authority, "c-action", "Publish fail.");
    let failed = of_type(&events, "action_failed");
    assert_eq!(failed.len(), 1, "{events:#?}");
    assert_eq!(failed[0]["outcome"], "failed");
    assert!(
        failed[0]["error"]
            .as_str()
            .unwrap()
            .contains("refused the headline"),
        "{}",
        failed[0]
    );
    dev.wait_for_times(r#"Called { tool: "journal:publish""#, 5);
    assert_eq!(calls_of(&dev, "journal:publish"), 5);
}

#[test]
fn a_dev_action_whose_session_goes_is_not_performed_and_one_cut_off_mid_perform_is_unknown() {
    let Running {
        mock,
        setup: _setup,
        served: _served,
        authority,
        token,
    } = Running::start("action-gone", "");
    // Staged, then the session goes while another call of the same step runs: nothing
    // performs the action, and the model reads that it was not.
    let mut dev = Dev::start(&authority, &token);
    dev.wait_for("Connected");
    mock.script(json!([
        {"type": "reply", "tool_calls": [
            {"name": "journal__publish", "arguments": {"headline": "Later"}},
            {"name": "journal__wait", "arguments": {"seconds": 60}}
        ]},
        {"type": "reply", "text": "Publishing."}
    ]));
    let turning = turn_in_background(&authority, "c-gone", "Publish later.");
    dev.wait_for(r#"Called { tool: "journal:wait""#);
    dev.child.kill().unwrap();
    let events = turning.join().unwrap();
    assert_eq!(of_type(&events, "action_staged").len(), 1, "{events:#?}");
    assert!(of_type(&events, "action_performed").is_empty());
    let failed = of_type(&events, "action_failed");
    assert_eq!(failed.len(), 1, "{events:#?}");
    assert_eq!(failed[0]["outcome"], "failed", "{}", failed[0]);
    assert!(
        failed[0]["error"].as_str().unwrap().contains("nothing ran"),
        "{}",
        failed[0]
    );
    assert_eq!(events.last().unwrap()["type"], "done");

    // Cut off while it performs: whether it took effect is not known, and it says so.
    let mut dev = Dev::start(&authority, &token);
    dev.wait_for("Connected");
    mock.script(json!([
        {"type": "reply", "tool_calls": [{"name": "journal__publish", "arguments": {"headline": "wait"}}]},
        {"type": "reply", "text": "Publishing."}
    ]));
    let turning = turn_in_background(&authority, "c-cut", "Publish slowly.");
    dev.wait_for_times(r#"Called { tool: "journal:publish""#, 2);
    dev.child.kill().unwrap();
    let events = turning.join().unwrap();
    let failed = of_type(&events, "action_failed");
    assert_eq!(failed.len(), 1, "{events:#?}");
    assert_eq!(failed[0]["outcome"], "unknown", "{}", failed[0]);
    assert!(
        failed[0]["error"]
            .as_str()
            .unwrap()
            .contains("whether it took effect is not known"),
        "{}",
        failed[0]
    );
}

#[test]
fn a_call_past_the_engines_deadline_is_stopped_on_the_developers_machine() {
    let Running {
        mock,
        setup: _setup,
        served: _served,
        authority,
        token,
    } = Running::start("deadline", "tool_timeout_ms = 300");
    let dev = Dev::start(&authority, &token);
    dev.wait_for("Connected");
    mock.script(json!([
        {"type": "reply", "tool_calls": [{"name": "journal__wait", "arguments": {"seconds": 60}}]},
        {"type": "reply", "text": "Too slow."}
    ]));
    let events = turn(&authority, "c-late", "Wait a minute.");
    let result = of_type(&events, "tool_result")[0];
    assert_eq!(result["status"], "timed_out", "{result}");
    // The engine told the session, which dropped the call (firing the call's abort
    // signal) rather than let it finish.
    let printed = dev.wait_for(r#"Called { tool: "journal:wait""#);
    let call = printed
        .split(r#"Called { tool: "journal:wait", call: "#)
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .unwrap()
        .to_owned();
    let printed = dev.wait_for(&format!("Cancelled {{ call: {call} }}"));
    assert!(
        !printed.contains(&format!("Finished {{ call: {call},")),
        "{printed}"
    );
    assert!(
        !printed.contains("Disconnected"),
        "the session stays open: {printed}"
    );
}

/// The reply's text of a turn's events.
fn reply(events: &[Value]) -> String {
    of_type(events, "chat")
        .iter()
        .map(|chat| chat["text"].as_str().unwrap())
        .collect()
}

#[test]
fn a_session_hook_overrides_a_linked_one_and_a_bound_one_runs_for_the_session() {
    let Running {
        mock,
        setup: _setup,
        served: _served,
        authority,
        token,
    } = Running::start("hooks", "");
    let journal = Dev::start(&authority, &token);
    let guard = Dev::start_binary(example("guard", "guard-dev"), &authority, &token);
    let connected = journal.wait_for("Connected");
    assert_eq!(
        listed(&connected, "hooks"),
        ["note_count"],
        "bound under its bare name: {connected}"
    );
    let connected = guard.wait_for("Connected");
    let mut hooks = listed(&connected, "hooks");
    hooks.sort();
    assert_eq!(
        hooks,
        ["guard:blank_message", "guard:dirty_output_guard"],
        "overrides keep the linked ids: {connected}"
    );

    // The bound hook reads the state the session's tool wrote, and tells the model.
    mock.script(json!([
        {"type": "reply", "tool_calls": [{"name": "journal__write_entry", "arguments": {"text": "hello"}}]},
        {"type": "reply", "text": "Written."},
        {"type": "reply", "text": "One entry."}
    ]));
    turn(&authority, "c-hooks", "Write hello.");
    let asked_before = mock.journal().len();
    let events = turn(&authority, "c-hooks", "How many entries?");
    assert_eq!(reply(&events), "One entry.");
    let request = serde_json::to_string(&mock.journal()[asked_before]["body"]).unwrap();
    assert!(
        request.contains("The journal holds 1 entries."),
        "{request}"
    );
    // The overrides ran on the developer's machine: each message and reply went there.
    guard.wait_for(r#"Called { tool: "guard:blank_message""#);
    guard.wait_for(r#"Called { tool: "guard:dirty_output_guard""#);

    // The overriding guard's outcomes count: a corrupted reply is replayed twice, then
    // replaced, as the linked guard would.
    mock.script(json!([
        {"type": "reply", "text": "broken \u{FFFD}"},
        {"type": "reply", "text": "still \u{FFFD}"},
        {"type": "reply", "text": "again \u{FFFD}"}
    ]));
    let asked = mock.journal().len();
    let vetted = |dev: &Dev| {
        let printed = dev.printed.lock().unwrap().clone();
        printed
            .matches(r#"Called { tool: "guard:dirty_output_guard""#)
            .count()
    };
    let before = vetted(&guard);
    let events = turn(&authority, "c-hooks", "Say something.");
    assert_eq!(reply(&events), guard::APOLOGY);
    assert_eq!(mock.journal().len(), asked + 3, "two replays");
    // Each of the three replies was vetted on the developer's machine: the linked
    // guard's outcomes would come to the same, so the calls are counted.
    assert_eq!(vetted(&guard) - before, 3);
}

/// The items of the list `field` (`equipped`, `hooks`) of the first `Connected` event in
/// `printed`; for `refused`, its tools.
fn listed(printed: &str, field: &str) -> Vec<String> {
    let line = printed
        .lines()
        .find(|line| line.contains("Connected {"))
        .expect("a Connected event");
    let Some((_, rest)) = line.split_once(&format!("{field}: [")) else {
        return Vec::new();
    };
    let list = &rest[..rest.find(']').unwrap_or(rest.len())];
    if field == "refused" {
        return list
            .split("tool: \"")
            .skip(1)
            .map(|item| item.split('"').next().unwrap().to_owned())
            .collect();
    }
    list.split(", ")
        .filter(|item| !item.is_empty())
        .map(|item| item.trim_matches('"').to_owned())
        .collect()
}

/// The session ids of the `Connected` events in `printed`, in order.
fn sessions(printed: &str) -> Vec<String> {
    printed
        .split("Connected { session: \"")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap().to_owned())
        .collect()
}

#[test]
fn the_watch_loop_swaps_a_new_build_in_without_dropping_the_session_or_its_calls() {
    let Running {
        mock,
        setup,
        served: _served,
        authority,
        token,
    } = Running::start("watch", "");
    // Watching a scratch directory, with a build that succeeds at once: the loop is the
    // one `--watch` runs, without a cargo build inside the test.
    let sources = setup.dir.join("sources");
    std::fs::create_dir_all(&sources).unwrap();
    let args = [
        "--watch",
        "--watch-dir",
        sources.to_str().unwrap(),
        "--build",
        "true",
    ];
    let dev = Dev::start_with(dev_binary(), &args, &authority, &token);
    dev.wait_for("Connected");
    mock.script(json!([
        {"type": "reply", "tool_calls": [{"name": "journal__wait", "arguments": {"seconds": 8}}]},
        {"type": "reply", "text": "Waited."},
        {"type": "reply", "tool_calls": [{"name": "journal__write_entry", "arguments": {"text": "after"}}]},
        {"type": "reply", "text": "Written."}
    ]));
    let turning = turn_in_background(&authority, "c-watch", "Wait eight seconds.");
    let printed = dev.wait_for(r#"Called { tool: "journal:wait""#);
    let call = printed
        .split(r#"Called { tool: "journal:wait", call: "#)
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .unwrap()
        .to_owned();
    // A source changes while the call runs.
    std::fs::write(sources.join("lib.rs"), "// changed").unwrap();
    dev.wait_for("Rebuilt { ok: true");
    let printed = dev.wait_for_times("Connected", 2);
    let ids = sessions(&printed);
    assert_eq!(ids.len(), 2, "{printed}");
    assert_eq!(ids[0], ids[1], "the same session, updated: {printed}");
    // The call under way finished in the build that took it, after the swap.
    let events = turning.join().unwrap();
    let printed = dev.printed.lock().unwrap().clone();
    let swapped = printed.match_indices("Connected").nth(1).unwrap().0;
    let finished = printed
        .find(&format!("Finished {{ call: {call}, ok: true"))
        .unwrap_or_else(|| panic!("the call finished: {printed}"));
    assert!(
        swapped < finished,
        "the swap came while the call ran: {printed}"
    );
    let result = of_type(&events, "tool_result")[0];
    assert_eq!(result["result"], "waited", "{result}\n{printed}");
    // The new build serves the next call.
    let events = turn(&authority, "c-watch", "Write after.");
    let result = of_type(&events, "tool_result")[0];
    assert_eq!(result["status"], "ok", "{result}");
    assert!(!dev.printed.lock().unwrap().contains("Disconnected"));
}

/// A TCP relay to `to`, whose connections can be cut: a network that drops.
struct Relay {
    address: String,
    open: Arc<Mutex<Vec<std::net::TcpStream>>>,
}

impl Relay {
    fn to(to: &str) -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap().to_string();
        let open: Arc<Mutex<Vec<std::net::TcpStream>>> = Arc::default();
        let (to, kept) = (to.to_owned(), Arc::clone(&open));
        std::thread::spawn(move || {
            for inbound in listener.incoming().map_while(Result::ok) {
                let Ok(outbound) = std::net::TcpStream::connect(&to) else {
                    continue;
                };
                let mut kept = kept.lock().unwrap();
                for (mut from, mut into) in [
                    (inbound.try_clone().unwrap(), outbound.try_clone().unwrap()),
                    (outbound.try_clone().unwrap(), inbound.try_clone().unwrap()),
                ] {
                    std::thread::spawn(move || {
                        let _ = std::io::copy(&mut from, &mut into);
                        let _ = into.shutdown(std::net::Shutdown::Both);
                    });
                }
                kept.extend([inbound, outbound]);
            }
        });
        Self { address, open }
    }

    /// Drops every connection through it.
    fn cut(&self) {
        for stream in self.open.lock().unwrap().drain(..) {
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
    }
}

#[test]
fn a_session_reconnects_after_its_connection_drops_and_is_equipped_again() {
    let Running {
        mock,
        setup: _setup,
        served,
        authority,
        token,
    } = Running::start("reconnect", "");
    let relay = Relay::to(&authority);
    let dev = Dev::start(&relay.address, &token);
    dev.wait_for("Connected");
    relay.cut();
    dev.wait_for("Disconnected");
    // The dev binary's backoff opens a new session, and the agent equips it again.
    let printed = dev.wait_for_times("Connected", 2);
    let ids = sessions(&printed);
    assert_ne!(ids[0], ids[1], "a new session: {printed}");
    served.wait_for_stderr(&format!("session=\"{}\"", ids[1]));
    mock.script(json!([
        {"type": "reply", "tool_calls": [{"name": "journal__write_entry", "arguments": {"text": "back"}}]},
        {"type": "reply", "text": "Written."}
    ]));
    let events = turn(&authority, "c-back", "Write back.");
    let result = of_type(&events, "tool_result")[0];
    assert_eq!(result["status"], "ok", "{result}");
}

/// A raw client of the dev route: the close frame's code and reason, or the refusal.
fn raw_session(authority: &str, token: &str, frames: Vec<String>) -> Result<(u16, String), String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut request = format!("ws://{authority}/v1/dev/agents/bot")
            .into_client_request()
            .unwrap();
        request
            .headers_mut()
            .insert("authorization", format!("Bearer {token}").parse().unwrap());
        let (mut socket, _) = match tokio_tungstenite::connect_async(request).await {
            Ok(connected) => connected,
            Err(WsError::Http(response)) => return Err(response.status().to_string()),
            Err(error) => return Err(error.to_string()),
        };
        for frame in frames {
            if socket.send(Message::text(frame)).await.is_err() {
                break;
            }
        }
        let closed = tokio::time::timeout(Duration::from_secs(20), async {
            while let Some(message) = socket.next().await {
                match message {
                    Ok(Message::Close(Some(frame))) => {
                        return (u16::from(frame.code), frame.reason.to_string())
                    }
                    Ok(Message::Close(None)) | Err(_) => return (0, String::new()),
                    Ok(_) => {}
                }
            }
            (0, String::new())
        })
        .await
        .expect("the engine closes the session");
        Ok(closed)
    })
}

#[test]
fn wrong_or_revoked_tokens_other_protocols_and_oversized_frames_are_refused() {
    let Running {
        mock: _mock,
        setup,
        served,
        authority,
        token,
    } = Running::start("refusals", "");
    let hello = |protocol: u32| {
        json!({"type": "hello", "protocol": protocol, "tools": [], "hooks": []}).to_string()
    };
    let (current, next) = (plugin_dev_wire::PROTOCOL, plugin_dev_wire::PROTOCOL + 1);

    let mut wrong = token.clone();
    wrong.pop();
    assert_eq!(
        raw_session(&authority, &wrong, vec![]),
        Err("401 Unauthorized".to_owned())
    );
    assert_eq!(
        raw_session(&authority, "", vec![]),
        Err("401 Unauthorized".to_owned())
    );

    let (code, reason) = raw_session(&authority, &token, vec![hello(next)]).unwrap();
    assert_eq!(code, 1002);
    assert!(reason.contains("protocol"), "{reason}");
    // Both sides log why: this client has the reason, the engine writes it.
    served.wait_for_stderr(&reason);

    let (code, reason) = raw_session(
        &authority,
        &token,
        vec![hello(current), json!({"type": "done", "call": 99, "outcome": {"ok": {"output": "1", "state_writes": {}}}}).to_string()],
    )
    .unwrap();
    assert_eq!(code, 1002);
    assert!(reason.contains("never made"), "{reason}");
    served.wait_for_stderr(&reason);

    // A frame the session would take but for its size: closed (1009, or cut off).
    let tool = json!({
        "namespace": "journal", "name": "big", "description": "x".repeat(1 << 21),
        "summary": "Big.", "category": null,
        "input_schema": {"type": "object", "properties": {}, "required": [], "additionalProperties": false},
        "strict": true, "exclusive": false, "action": false,
        "needs": {"conversation": false, "model": false, "audit": false, "project": false, "plugin_state": false, "knowledge": null},
        "secrets": []
    });
    let oversized = json!({"type": "update", "tools": [tool]}).to_string();
    let (code, _) = raw_session(&authority, &token, vec![hello(current), oversized]).unwrap();
    assert!(
        code == 1009 || code == 0,
        "closed for its size (or cut off): {code}"
    );
    // The engine says why, whichever the client saw.
    served.wait_for_stderr("a frame may be larger than the 1048576 bytes");

    // The dev binary is told the same, and stops rather than retrying.
    let mut refused = Dev::start(&authority, &wrong);
    let started = Instant::now();
    let status = loop {
        if let Some(status) = refused.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "a refused dev binary retries"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(!status.success());
    refused.wait_for("401");

    let id = token.split('_').nth(1).unwrap();
    let revoked = Command::new(env!("CARGO_BIN_EXE_engine"))
        .arg("--config")
        .arg(setup.config())
        .args(["--agent", "bot", "dev-token", "revoke", id])
        .output()
        .unwrap();
    assert!(revoked.status.success(), "{revoked:?}");
    assert_eq!(
        raw_session(&authority, &token, vec![]),
        Err("401 Unauthorized".to_owned())
    );
}
