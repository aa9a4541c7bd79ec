//! The knowledge store under hostile searches, over `serve` with two MCP clients at once
//! (the official Python client): a search answers within about its deadline, refused or
//! stopped, another client's calls are answered meanwhile, and a stopped search frees
//! its connection.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

const ENGINE: &str = env!("CARGO_BIN_EXE_engine");

/// The deadline the engine is served with, in milliseconds.
const DEADLINE_MS: u64 = 1_000;

/// A served call answered within this many seconds after its deadline did not hang.
const GRACE_S: f64 = 5.0;

/// A fresh directory with an engine configuration whose default agent reads the
/// knowledge base kept there, with `connections` to it; answers the directory and the
/// configuration's path.
fn configured(name: &str, connections: usize) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("engine-bounded-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("engine.toml");
    std::fs::write(
        &config,
        format!(
            "data_dir = {:?}\n[knowledge]\nconnections = {connections}\n[agents.default]\nknowledge = \"read\"\n",
            dir.display().to_string()
        ),
    )
    .unwrap();
    (dir, config)
}

/// Fills the default agent's knowledge base under `dir` with `count` documents, each
/// holding every word of `words`: a search for them matches, ranks and snippets them all.
fn fill(dir: &Path, count: usize, words: &str) {
    let path = dir.join("knowledge.sqlite");
    // The store makes its schema; the documents go in with one statement.
    drop(engine_sqlite::SqliteKnowledge::open(&path, Default::default()).unwrap());
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
             INSERT INTO documents (agent, filename, content, origin)
             SELECT 'default', 'doc' || i || '.md', ?2 || ' ' || i, 'notes' FROM n",
            rusqlite::params![count as i64, words],
        )
        .unwrap();
}

/// Serves the engine with `config`, runs `tests/mcp/concurrent_clients.py`: `count`
/// searches for `words` from one client, the weather from another until they answer,
/// then a search for `then` (if any) from that other client.
fn hostile_searches(config: &Path, words: &str, count: usize, then: Option<&str>) -> Value {
    let timeout = DEADLINE_MS.to_string();
    let (_served, url) = test_support::mcp::serve(
        ENGINE,
        &[
            "--config",
            config.to_str().unwrap(),
            "--timeout-ms",
            &timeout,
        ],
    );
    let mut plan = json!({
        "url": url,
        "hostile": { "name": "notes__search_notes", "arguments": { "words": words }, "count": count },
        "probe": { "name": "weather__weather", "arguments": { "city": "Rome", "days": 1, "units": null } },
        "limit_s": 120,
    });
    if let Some(then) = then {
        plan["after"] = json!({ "name": "notes__search_notes", "arguments": { "words": then } });
    }
    let output = test_support::mcp::run_script("concurrent_clients.py", &plan);
    assert!(
        output.status.success(),
        "the clients failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("the clients' JSON report")
}

/// The error kind of a tool result the engine marked `isError`.
fn error_kind(result: &Value) -> String {
    assert_eq!(result["isError"], true, "{result}");
    let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap())
        .expect("an error as JSON");
    text["error"]["kind"].as_str().unwrap().to_owned()
}

/// Every hostile search answered `kind` within the deadline and the grace, and every
/// probe was answered, none of them hanging; answers the report's hostile entries.
fn assert_bounded<'r>(report: &'r Value, count: usize, kind: &str) -> &'r [Value] {
    let hostile = report["hostile"].as_array().unwrap();
    assert_eq!(
        hostile.len(),
        count,
        "every hostile search answered: {report}"
    );
    for answer in hostile {
        assert_eq!(error_kind(&answer["result"]), kind, "{answer}");
        let ended = answer["ended_s"].as_f64().unwrap();
        assert!(
            ended < DEADLINE_MS as f64 / 1000.0 + GRACE_S,
            "answered after {ended} s"
        );
    }
    let probes = report["probes"].as_array().unwrap();
    assert!(!probes.is_empty(), "{report}");
    for probe in probes {
        assert_eq!(probe["result"]["isError"], false, "{probe}");
        let took = probe["ended_s"].as_f64().unwrap() - probe["started_s"].as_f64().unwrap();
        assert!(took < GRACE_S, "a probe took {took} s");
    }
    hostile
}

#[test]
fn a_search_of_thirty_thousand_words_is_refused_at_once_naming_the_cap() {
    let (dir, config) = configured("words", 4);
    fill(&dir, 100, "refund policy");
    let words: Vec<String> = (0..30_000).map(|n| format!("word{n}")).collect();
    let report = hostile_searches(&config, &words.join(" "), 4, None);
    for answer in assert_bounded(&report, 4, "invalid_arguments") {
        // At once: well before the 1 s deadline plus the client's round trips.
        let ended = answer["ended_s"].as_f64().unwrap();
        assert!(ended < 2.0, "refused after {ended} s");
        let text = answer["result"]["content"][0]["text"].as_str().unwrap();
        assert!(
            text.contains("30000 distinct words") && text.contains("at most 32"),
            "{text}"
        );
    }
}

#[test]
fn a_slow_search_is_stopped_at_its_deadline_while_another_client_is_served() {
    // One connection: the search after the slow ones is served within its deadline only
    // if the stopped searches gave the connection back.
    let (dir, config) = configured("slow", 1);
    // Within the cap on words, and slow all the same: every one of many documents
    // matches, and each is ranked and quoted. So many that a search left to run after its
    // deadline would keep the connection past the next search's deadline too.
    let words: Vec<String> = (0..32).map(|n| format!("w{n}")).collect();
    let words = words.join(" ");
    fill(&dir, 150_000, &words);
    // More searches than the served engine has workers.
    let report = hostile_searches(&config, &words, 4, Some("refund"));
    let hostile = assert_bounded(&report, 4, "timed_out");
    let first_answer = hostile
        .iter()
        .map(|answer| answer["ended_s"].as_f64().unwrap())
        .fold(f64::INFINITY, f64::min);
    // A probe sent once the searches had reached the engine (0.3 s in), and answered
    // before any search was: the searches held no worker the other client needed.
    assert!(
        report["probes"].as_array().unwrap().iter().any(|probe| {
            probe["started_s"].as_f64().unwrap() >= 0.3
                && probe["ended_s"].as_f64().unwrap() < first_answer
        }),
        "the other client was answered while the searches ran: {report}"
    );
    let after = &report["after"]["result"];
    assert_eq!(
        after["isError"], false,
        "the search after the stopped ones got the connection: {report}"
    );
}
