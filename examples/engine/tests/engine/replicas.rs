//! Two `engine serve` replicas on one PostgreSQL, under load (`bash scripts/test` starts
//! the server; without `PLUGIN_SDK_POSTGRES_URL` this fails, saying so). A few hundred
//! conversations of several turns each, every turn sent to a replica at random, against
//! llmock answering at once: each turn the model calls the staged action
//! `contacts:log_contact`, then answers. Meanwhile files are put on one replica and
//! read (taken) on the other. One replica is killed midway and started again. Then:
//! every history is complete and in order, no action was performed twice, no file was
//! read twice, and the turns' costs add up to what the clients were told.

use std::collections::BTreeMap;
use std::io::Read;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::turn_setup::{last_tool_answer, serve_config, Setup};
use serde_json::{json, Value};
use test_support::llmock::Llmock;
use test_support::mcp::Served;

const CONVERSATIONS: usize = 200;
const TURNS: usize = 3;
const CLIENTS: usize = 8;
/// Files put on one replica and read on the other.
const FILES: usize = 10;

/// The replicas up now, by authority.
type Live = Arc<Mutex<Vec<String>>>;

/// A fresh database on the test server for the test `test`, and the URL of it (no
/// password in it).
fn fresh_database_named(test: &str) -> String {
    let server = std::env::var("PLUGIN_SDK_POSTGRES_URL").expect(
        "PLUGIN_SDK_POSTGRES_URL is not set: run `bash scripts/test`, which starts a throwaway PostgreSQL",
    );
    let name = format!("engine_replicas_{test}_{}", std::process::id());
    psql(&server, &format!("DROP DATABASE IF EXISTS {name}"));
    psql(&server, &format!("CREATE DATABASE {name}"));
    format!("{}/{name}", server.rsplit_once('/').unwrap().0)
}

/// Runs `sql` with psql; answers its rows, one per line, `|` between fields.
fn psql(url: &str, sql: &str) -> String {
    let output = Command::new("psql")
        .args([url, "-X", "-q", "-tA", "-v", "ON_ERROR_STOP=1", "-c", sql])
        .env(
            "PGPASSWORD",
            std::env::var("PLUGIN_SDK_POSTGRES_PASSWORD").unwrap_or_default(),
        )
        .output()
        .expect("psql runs");
    assert!(output.status.success(), "{sql}: {output:?}");
    String::from_utf8(output.stdout).unwrap()
}

/// What one turn came to, from the client's side.
enum Sent {
    /// Its `done` event.
    Done(Value),
    /// Refused because another turn of the conversation is under way.
    Busy,
    /// No `done`: the replica went away, or never answered.
    Lost,
}

/// [`send`], or `None` when the replica is not there (it may be killed at any moment).
fn try_send(replica: &str, method: &str, path: &str, body: &str) -> Option<Vec<u8>> {
    use std::io::Write;
    let mut client = std::net::TcpStream::connect(replica).ok()?;
    client
        .set_read_timeout(Some(Duration::from_secs(30)))
        .ok()?;
    write!(
        client,
        "{method} {path} HTTP/1.1\r\nhost: {replica}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .ok()?;
    let mut answer = Vec::new();
    let _ = client.read_to_end(&mut answer);
    Some(answer)
}

/// Sends a turn of `conversation` (`message`, or a resume) to `replica`.
fn turn(
    replica: &str,
    agent: &str,
    conversation: &str,
    message: Option<&str>,
) -> (Sent, Vec<Value>) {
    let body = json!({
        "message": message,
        "conversation": conversation,
        "subscriber": format!("u-{conversation}"),
    });
    let path = format!("/v1/agents/{agent}/turns");
    let Some(answer) = try_send(replica, "POST", &path, &body.to_string()) else {
        return (Sent::Lost, Vec::new());
    };
    if answer.starts_with(b"HTTP/1.1 409") {
        return (Sent::Busy, Vec::new());
    }
    let events: Vec<Value> = String::from_utf8_lossy(&answer)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event.get("type").is_some())
        .collect();
    let sent = match events.last() {
        Some(done) if done["type"] == "done" => Sent::Done(done.clone()),
        _ => Sent::Lost,
    };
    (sent, events)
}

/// A replica at random (the clients' own xorshift: no dependency for a coin).
fn pick(live: &Live, seed: &mut u64) -> String {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    let live = live.lock().unwrap();
    live[(*seed % live.len() as u64) as usize].clone()
}

/// The stored history of `conversation`, from `replica`; `None` when the replica is
/// gone or holds nothing of it yet.
fn try_history(replica: &str, conversation: &str) -> Option<Value> {
    let path = format!("/v1/conversations/{conversation}");
    let answer = String::from_utf8(try_send(replica, "GET", &path, "")?).ok()?;
    let (head, body) = answer.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.1 200")
        .then(|| serde_json::from_str(body).expect("a history is JSON"))
}

fn history(replica: &str, conversation: &str) -> Value {
    try_history(replica, conversation)
        .unwrap_or_else(|| panic!("{replica} has no history of {conversation}"))
}

fn user_messages(history: &Value) -> Vec<String> {
    history["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "user")
        .map(|message| message["content"].as_str().unwrap().to_owned())
        .collect()
}

/// What a client saw of a conversation's turns.
#[derive(Default)]
struct Seen {
    /// The `done` events it got.
    dones: Vec<Value>,
    /// The actions it was told were performed.
    performed: usize,
    /// Turns that ended (stored) on a replica killed before their `done` went out.
    ended_unseen: usize,
    /// Turns sent to a replica that went away before their `done`.
    lost: usize,
}

/// Drives `conversation` through its turns, each on a replica at random, until each is
/// done; a turn whose replica went away is resumed (its message was stored) or sent
/// again (it was not).
fn converse(live: &Live, conversation: &str, seed: &mut u64, finished: &AtomicUsize) -> Seen {
    let mut seen = Seen::default();
    for n in 0..TURNS {
        let message = format!("Log the contact {conversation} turn {n}: call back.");
        let mut resume = false;
        for attempt in 0.. {
            assert!(attempt < 50, "{conversation} turn {n} never finished");
            let replica = pick(live, seed);
            let (sent, events) = turn(&replica, "bot", conversation, (!resume).then_some(&message));
            seen.performed += events
                .iter()
                .filter(|event| event["type"] == "action_performed")
                .count();
            match sent {
                Sent::Done(done) => {
                    // A turn on a replica that stays up answers: the other's death, or
                    // the database, fails none of them.
                    assert_eq!(
                        done["stop"]["reason"], "answered",
                        "{conversation} turn {n}: {done}"
                    );
                    seen.dones.push(done);
                    break;
                }
                Sent::Busy => std::thread::sleep(Duration::from_millis(20)),
                Sent::Lost => {
                    seen.lost += 1;
                    // Its replica went away; the conversation is let go on the other
                    // as soon as the database sees the connection close.
                    std::thread::sleep(Duration::from_millis(200));
                    let other = pick(live, seed);
                    let Some(stored) = try_history(&other, conversation) else {
                        continue;
                    };
                    resume = user_messages(&stored).last() == Some(&message);
                    let ended = stored["messages"]
                        .as_array()
                        .unwrap()
                        .last()
                        .is_some_and(|last| {
                            last["role"] == "assistant" && last.get("tool_calls").is_none()
                        });
                    if resume && ended {
                        // It ended before the replica died; only its `done` was lost.
                        seen.ended_unseen += 1;
                        break;
                    }
                }
            }
        }
        finished.fetch_add(1, Ordering::SeqCst);
    }
    seen
}

/// A turn of `filer` that calls `tool` with `arguments` (scripted on `mock`), on
/// `replica`: the tool's result.
fn file_turn(
    mock: &Llmock,
    replica: &str,
    conversation: &str,
    tool: &str,
    arguments: Value,
) -> Value {
    mock.script(json!([
        {"type": "reply", "tool_calls": [{"name": tool, "arguments": arguments}]},
        {"type": "reply", "text": "Done."}
    ]));
    let (sent, events) = turn(replica, "filer", conversation, Some("the file"));
    assert!(matches!(sent, Sent::Done(_)), "{events:#?}");
    let result = events
        .iter()
        .find(|event| event["type"] == "tool_result")
        .unwrap_or_else(|| panic!("no tool result: {events:#?}"));
    assert_eq!(result["status"], "ok", "{result}");
    result["result"].clone()
}

/// The configuration of a second replica beside `setup`'s: the same but for a data
/// directory of its own, so that nothing of a conversation is shared but through the
/// database.
fn second_replica(setup: &Setup) -> std::path::PathBuf {
    let written = std::fs::read_to_string(setup.config()).unwrap();
    let a_data = format!("data_dir = {:?}", setup.dir.join("data"));
    let b_data = format!("data_dir = {:?}", setup.dir.join("b-data"));
    assert!(written.contains(&a_data), "{written}");
    let config = setup.dir.join("b.toml");
    std::fs::write(&config, written.replace(&a_data, &b_data)).unwrap();
    config
}

/// Starts a replica on the configuration at `config`.
fn start(config: &std::path::Path) -> (Served, String) {
    serve_config(config, None)
}

/// How many turns the replica with process `pid` has under way, as the database sees it.
fn running_on(database: &str, pid: u32) -> usize {
    psql(
        database,
        &format!("SELECT count(*) FROM running_turns WHERE replica LIKE '%-{pid}-%'"),
    )
    .trim()
    .parse()
    .unwrap()
}

#[test]
fn two_replicas_under_load_with_one_killed_lose_nothing_and_do_nothing_twice() {
    let database = fresh_database_named("load");
    let load = Llmock::start_auto();
    let files = Llmock::start();
    let dir = std::env::temp_dir().join(format!("engine-replicas-{}", std::process::id()));
    // An earlier process given the same pid may have left its log behind.
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let crm = dir.join("crm.jsonl");
    let lines = format!(
        "[agents.bot]\ntools = [\"contacts:log_contact\"]\n\
         [agents.bot.secrets]\ncrm_book = {crm:?}\n\
         [providers.files]\nwire = \"openai\"\nbase_url = {files_url:?}\nmodel = {files_model:?}\n\
         [agents.filer]\ntools = [\"notes:note_file\", \"notes:read_file\"]\n\
         [agents.filer.turn]\nprovider = \"files\"\n\
         [database]\nurl = {database:?}\npassword_env = \"PLUGIN_SDK_POSTGRES_PASSWORD\"\n",
        files_url = files.openai_url(),
        files_model = files.model(),
    );
    let setup = Setup::new("replicas", &load, "openai", "", &lines);
    // Each model request takes a moment: every client is in a turn most of the time, so
    // the kill cuts some.
    load.script(json!([{"type": "delay", "seconds": 0.02, "times": null}]));
    let b_config = second_replica(&setup);
    let (a, a_at) = start(&setup.config());
    let (b, b_at) = start(&b_config);
    let live: Live = Arc::new(Mutex::new(vec![a_at.clone(), b_at.clone()]));
    let finished = Arc::new(AtomicUsize::new(0));

    let clients: Vec<_> = (0..CLIENTS)
        .map(|client| {
            let (live, finished) = (Arc::clone(&live), Arc::clone(&finished));
            std::thread::spawn(move || {
                let mut seed = 0x9e37_79b9_7f4a_7c15 ^ (client as u64 + 1);
                let mut seen = BTreeMap::new();
                for n in (client..CONVERSATIONS).step_by(CLIENTS) {
                    let conversation = format!("c{n}");
                    let got = converse(&live, &conversation, &mut seed, &finished);
                    seen.insert(conversation, got);
                }
                seen
            })
        })
        .collect();

    // Files put on b, before it is killed.
    let handles: Vec<Value> = (0..FILES)
        .map(|n| {
            let arguments = json!({"name": format!("f{n}"), "text": format!("secret {n}")});
            file_turn(
                &files,
                &b_at,
                &format!("f{n}"),
                "notes__note_file",
                arguments,
            )
        })
        .collect();

    // Midway, with a turn under way on it, b is killed (SIGKILL: nothing of it ends
    // cleanly). A client that fails stops the wait, and shows why when joined.
    let started = std::time::Instant::now();
    let waiting = |enough: &dyn Fn() -> bool| {
        while !enough() {
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "the load never got midway"
            );
            if clients.iter().any(|client| client.is_finished()) {
                break;
            }
            // A check may be a `psql` process: a few a second, not hundreds.
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    waiting(&|| finished.load(Ordering::SeqCst) >= CONVERSATIONS * TURNS / 3);
    waiting(&|| running_on(&database, b.pid()) > 0);
    let b_said = b.stop();
    live.lock().unwrap().retain(|at| at != &b_at);

    // Each file is read once on a, whichever replica put it; a second read finds none.
    for (n, handle) in handles.iter().enumerate() {
        let read = json!({ "handle": handle });
        let first = file_turn(
            &files,
            &a_at,
            &format!("f{n}"),
            "notes__read_file",
            read.clone(),
        );
        assert_eq!(first, json!(format!("secret {n}")));
        let again = file_turn(&files, &a_at, &format!("f{n}"), "notes__read_file", read);
        assert_eq!(again, Value::Null, "file {n} was read twice");
    }

    // b comes back, on a new port.
    let (b, b_at) = start(&b_config);
    live.lock().unwrap().push(b_at.clone());
    let mut seen = BTreeMap::new();
    for client in clients {
        seen.extend(client.join().expect("a client finished"));
    }
    for (n, handle) in handles.iter().enumerate() {
        let read = json!({ "handle": handle });
        let after = file_turn(&files, &b_at, &format!("f{n}"), "notes__read_file", read);
        assert_eq!(
            after,
            Value::Null,
            "file {n} was read again after the restart"
        );
    }

    // Every history is complete and in order: the user's messages once each, in the
    // order sent; every tool call answered once; a reply at the end.
    let mut performed = BTreeMap::new();
    let mut unknown = BTreeMap::new();
    for n in 0..CONVERSATIONS {
        let conversation = format!("c{n}");
        let stored = history(if n % 2 == 0 { &a_at } else { &b_at }, &conversation);
        let sent: Vec<String> = (0..TURNS)
            .map(|turn| format!("Log the contact {conversation} turn {turn}: call back."))
            .collect();
        assert_eq!(user_messages(&stored), sent, "{conversation}: {stored:#}");
        let messages = stored["messages"].as_array().unwrap();
        for (at, message) in messages.iter().enumerate() {
            for call in message["tool_calls"].as_array().into_iter().flatten() {
                let answers = messages[at + 1..]
                    .iter()
                    .take_while(|later| later["role"] == "tool")
                    .filter(|later| later["call_id"] == call["id"])
                    .count();
                assert_eq!(
                    answers, 1,
                    "{conversation}: call {call} has {answers} answers"
                );
            }
        }
        // Each user message is answered in words before the next one.
        let replied =
            |message: &Value| message["role"] == "assistant" && message.get("tool_calls").is_none();
        let users: Vec<usize> = (0..messages.len())
            .filter(|at| messages[*at]["role"] == "user")
            .chain([messages.len()])
            .collect();
        for pair in users.windows(2) {
            assert!(
                messages[pair[0] + 1..pair[1]].iter().any(replied),
                "{conversation}: the user message at {} has no reply: {stored:#}",
                pair[0]
            );
        }
        let last = messages.last().unwrap();
        assert!(replied(last), "{conversation} ends with {last}");
        for action in stored["actions"].as_array().unwrap() {
            let state = action["state"].as_str().unwrap();
            assert!(
                ["performed", "unknown"].contains(&state),
                "{conversation}: {action}"
            );
            let count = if state == "performed" {
                &mut performed
            } else {
                &mut unknown
            };
            *count.entry(format!("u-{conversation}")).or_insert(0usize) += 1;
        }
    }

    // No action performed twice: each customer's CRM lines are its performed actions,
    // and at most those whose outcome is unknown (cut by the kill) besides.
    let mut logged: BTreeMap<String, usize> = BTreeMap::new();
    for line in std::fs::read_to_string(&crm).unwrap().lines() {
        let record: Value = serde_json::from_str(line).unwrap();
        *logged
            .entry(record["customer"].as_str().unwrap().to_owned())
            .or_default() += 1;
    }
    // And every action a client was told was performed is stored performed.
    for n in 0..CONVERSATIONS {
        let customer = format!("u-c{n}");
        let (done, maybe) = (
            performed.get(&customer).copied().unwrap_or(0),
            unknown.get(&customer).copied().unwrap_or(0),
        );
        let lines = logged.get(&customer).copied().unwrap_or(0);
        let told = seen[&format!("c{n}")].performed;
        assert!(
            told >= 1 && done >= told && (done..=done + maybe).contains(&lines),
            "{customer}: {lines} CRM lines for {done} performed and {maybe} unknown, {told} told performed"
        );
    }

    // The turns' costs as recorded across both replicas are the costs each client was
    // told: no turn recorded twice or lost. A turn cut by the kill is recorded
    // interrupted, at no known cost. One whose reply was stored before the kill and
    // whose `done` never went out may be either: recorded (the kill came after its
    // record), or interrupted (before).
    let told: f64 = seen
        .values()
        .flat_map(|seen| &seen.dones)
        .map(|done| done["cost_usd"].as_f64().unwrap())
        .sum();
    let told_turns: usize = seen.values().map(|seen| seen.dones.len()).sum();
    let unseen: usize = seen.values().map(|seen| seen.ended_unseen).sum();
    let recorded = psql(
        &database,
        "SELECT count(*), COALESCE(sum(cost_usd), 0) FROM turns
         WHERE conversation LIKE 'c%' AND stop <> '{\"reason\":\"interrupted\"}'",
    );
    let fields: Vec<&str> = recorded.trim().split('|').collect();
    let recorded_turns: usize = fields[0].parse().unwrap();
    assert!(
        (told_turns..=told_turns + unseen).contains(&recorded_turns),
        "{recorded_turns} recorded, {told_turns} told, {unseen} ended unseen"
    );
    let recorded_cost: f64 = fields[1].parse().unwrap();
    let dearest = seen
        .values()
        .flat_map(|seen| &seen.dones)
        .map(|done| done["cost_usd"].as_f64().unwrap())
        .fold(0.0, f64::max);
    let unseen_cost = (recorded_turns - told_turns) as f64 * dearest;
    assert!(
        recorded_cost >= told - 1e-9 && recorded_cost <= told + unseen_cost + 1e-9,
        "recorded {recorded_cost}, told {told}"
    );
    assert!(told > 0.0);
    let interrupted = psql(
        &database,
        "SELECT count(*) FROM turns WHERE stop = '{\"reason\":\"interrupted\"}'",
    );
    let lost: usize = seen.values().map(|seen| seen.lost).sum();
    eprintln!(
        "{told_turns} turns told, {lost} lost to the kill ({unseen} of them ended unseen, {} interrupted), {} actions unknown",
        interrupted.trim(),
        unknown.values().sum::<usize>()
    );
    assert!(
        lost > 0,
        "the kill cut no turn: nothing here was tested against it"
    );
    assert!(
        interrupted.trim().parse::<usize>().unwrap() > 0,
        "b was killed with a turn under way: the next turn of its conversation records it interrupted"
    );
    let replicas = psql(&database, "SELECT count(DISTINCT replica) FROM turns");
    assert_eq!(replicas.trim(), "3", "turns ran on a, on b, and on b again");

    drop(b_said);
    a.stop();
    b.stop();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_replica_killed_mid_perform_leaves_the_action_unknown_and_the_other_never_performs_it() {
    let database = fresh_database_named("killed");
    let mock = Llmock::start();
    let dir = std::env::temp_dir().join(format!("engine-replicas-killed-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // A FIFO with no reader: opening it to write blocks, so the perform hangs after the
    // action was claimed, until the replica is killed.
    let crm = dir.join("crm.jsonl");
    assert!(Command::new("mkfifo").arg(&crm).status().unwrap().success());
    let lines = format!(
        "tool_timeout_ms = 600000\n\
         [agents.bot]\ntools = [\"contacts:log_contact\"]\n\
         [agents.bot.secrets]\ncrm_book = {crm:?}\n\
         [database]\nurl = {database:?}\npassword_env = \"PLUGIN_SDK_POSTGRES_PASSWORD\"\n",
    );
    let setup = Setup::new("replicas-killed", &mock, "openai", "", &lines);
    let log_contact = json!({"name": "contacts__log_contact", "arguments":
        {"outcome": "interested", "call_back": null, "note": "Only once."}});
    mock.script(json!([
        {"type": "reply", "tool_calls": [log_contact]},
        {"type": "reply", "text": "Logging it."},
        {"type": "reply", "text": "Back in c-7."}
    ]));
    let (a, a_at) = start(&setup.config());
    let hung = std::thread::spawn(move || turn(&a_at, "bot", "c-7", Some("Hi")));
    let started = std::time::Instant::now();
    let state = |database: &str| {
        psql(
            database,
            "SELECT state FROM actions WHERE conversation = 'c-7'",
        )
        .trim()
        .to_owned()
    };
    while state(&database) != "performing" {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the action was never claimed"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(a.stop());
    assert!(matches!(hung.join().unwrap().0, Sent::Lost));
    // The book is a plain file again: a perform now would write to it.
    std::fs::remove_file(&crm).unwrap();
    std::fs::write(&crm, "").unwrap();

    // The other replica reads what became of it.
    let (b, b_at) = start(&second_replica(&setup));
    let started = std::time::Instant::now();
    let stored = loop {
        // The server lets the killed replica's lock go a moment after its connection closes.
        let stored = history(&b_at, "c-7");
        if stored["actions"][0]["state"] != "performing" {
            break stored;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "{stored:#}");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(stored["actions"][0]["state"], "unknown", "{stored:#}");
    assert_eq!(
        psql(
            &database,
            "SELECT stop FROM turns WHERE conversation = 'c-7' ORDER BY id"
        )
        .trim(),
        r#"{"reason":"interrupted"}"#
    );

    // The conversation goes on on b: its model reads what became of the action, and
    // nothing performs it again.
    let (sent, events) = turn(&b_at, "bot", "c-7", Some("Did you log it?"));
    assert!(
        matches!(sent, Sent::Done(ref done) if done["stop"]["reason"] == "answered"),
        "{events:#?}"
    );
    let answer = last_tool_answer(&mock);
    assert!(answer.contains(r#""outcome":"unknown""#), "{answer}");
    assert_eq!(
        std::fs::read_to_string(&crm).unwrap(),
        "",
        "never performed"
    );
    drop(b);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `replica`'s JSON answer to `method path` with `body`, and its status line.
fn admin(replica: &str, method: &str, path: &str, body: &str) -> (String, Value) {
    let answer = try_send(replica, method, path, body).expect("the replica answers");
    let answer = String::from_utf8(answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    let status = head.lines().next().unwrap().to_owned();
    (
        status,
        serde_json::from_str(body.trim()).unwrap_or(Value::Null),
    )
}

/// Where `replica` says the agent `bot`'s secret `key` comes from.
fn secret_source(replica: &str, key: &str) -> String {
    let (_, secrets) = admin(replica, "GET", "/v1/admin/agents/bot/secrets", "");
    secrets["secrets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|secret| secret["key"] == key)
        .map(|secret| secret["source"].as_str().unwrap().to_owned())
        .unwrap()
}

#[test]
fn a_secret_set_on_one_replicas_panel_is_kept_in_the_database_and_equipped_by_the_other() {
    let database = fresh_database_named("secrets");
    let mock = Llmock::start();
    let lines = format!(
        "[database]\nurl = {database:?}\npassword_env = \"PLUGIN_SDK_POSTGRES_PASSWORD\"\n"
    );
    let setup = Setup::new("replica-secrets", &mock, "openai", "", &lines);
    let b_config = second_replica(&setup);
    let (a, a_at) = start(&setup.config());
    let (b, b_at) = start(&b_config);
    let follows = |replica: &str, key: &str, source: &str| {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while secret_source(replica, key) != source {
            assert!(
                std::time::Instant::now() < deadline,
                "{replica} did not follow to {source}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    assert_eq!(secret_source(&b_at, "crm_book"), "unset");
    let (status, answered) = admin(
        &a_at,
        "POST",
        "/v1/admin/agents/bot/secrets/crm_book",
        r#"{"value":"/tmp/replica-crm-book.jsonl"}"#,
    );
    assert!(status.starts_with("HTTP/1.1 200"), "{status} {answered}");
    // In the shared database, not in a replica's data directory.
    assert_eq!(
        psql(&database, "SELECT agent || ':' || key FROM panel_secrets").trim(),
        "bot:crm_book"
    );
    assert!(!setup.dir.join("data/panel-secrets.json").exists());
    // The other replica follows, and equips the tool that reads it.
    follows(&b_at, "crm_book", "panel");
    let (_, tools) = admin(&b_at, "GET", "/v1/admin/agents/bot/tools", "");
    let log_contact = tools["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|plugin| plugin["categories"].as_array().unwrap())
        .flat_map(|category| category["tools"].as_array().unwrap())
        .find(|tool| tool["id"] == "contacts:log_contact")
        .unwrap()
        .clone();
    assert_eq!(log_contact["equipped"], true, "{log_contact}");
    // Cleared on that one, the first follows.
    let (status, answered) = admin(
        &b_at,
        "POST",
        "/v1/admin/agents/bot/secrets/crm_book",
        r#"{"value":null}"#,
    );
    assert!(status.starts_with("HTTP/1.1 200"), "{status} {answered}");
    follows(&a_at, "crm_book", "unset");
    assert_eq!(
        psql(&database, "SELECT count(*) FROM panel_secrets").trim(),
        "0"
    );
    drop((a, b));
}
