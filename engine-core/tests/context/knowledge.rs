//! Knowledge, on the real SQLite store: levels decide what is equipped, writes are owned
//! by their plugin, and refusals are answers, never errors.

use std::time::{Duration, Instant};

use engine_core::Engine;
use serde_json::{json, Value};

use crate::support::{call, engine, in_conversation};

fn knowledge_engine(dir: &std::path::Path, extra: &str) -> Engine {
    // An agent grants knowledge: the engine opens the SQLite store under `data_dir`.
    engine(&format!(
        "data_dir = {:?}\n[knowledge]\nmax_document_bytes = 64\nmax_documents = 3\n{extra}",
        dir.display().to_string()
    ))
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("engine-core-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[tokio::test]
async fn knowledge_levels_decide_what_is_equipped_and_the_optional_form_degrades() {
    let dir = temp_dir("levels");
    let engine = knowledge_engine(
        &dir,
        "[agents.reader]\nknowledge = \"read\"\n[agents.none]\n",
    );
    let reader = engine.agent("reader").unwrap();
    let equipped: Vec<&str> = reader.tools().map(|tool| tool.id()).collect();
    assert!(equipped.contains(&"ctx:kb_get") && equipped.contains(&"ctx:kb_search"));
    assert!(!equipped.contains(&"ctx:kb_write"));
    let reasons = &reader
        .left_out()
        .iter()
        .find(|left| left.tool == "ctx:kb_write")
        .unwrap()
        .reasons;
    assert_eq!(
        reasons,
        &["it needs the knowledge base at `write`, and the agent grants read"]
    );
    let none = engine.agent("none").unwrap();
    assert!(
        none.tools().any(|tool| tool.id() == "ctx:kb_search"),
        "the optional form is always equipped"
    );
    let session = engine.turn("none").unwrap();
    let degraded = call(&engine, &session, "ctx__kb_search", json!({ "text": "x" }))
        .await
        .unwrap();
    assert_eq!(degraded, json!(["knowledge is not granted"]));
}

#[tokio::test]
async fn a_tool_asking_for_read_writes_where_the_agent_grants_it_and_every_call_is_audited() {
    let captured = crate::support::Captured::default();
    let _logging = captured.start();
    let dir = temp_dir("grant");
    let engine = knowledge_engine(
        &dir,
        "[agents.reader]\nknowledge = \"read\"\n[agents.writer]\nknowledge = \"write\"\n",
    );
    // Asking for `read` equips it for both agents.
    for agent in ["reader", "writer"] {
        let equipped = engine.agent(agent).unwrap();
        assert!(equipped.tools().any(|tool| tool.id() == "ctx:kb_note"));
    }
    let reader = in_conversation(&engine, "reader", "sub-r", "c-r");
    let read_only = call(
        &engine,
        &reader,
        "ctx__kb_note",
        json!({ "text": "refunds" }),
    )
    .await
    .unwrap();
    assert_eq!(
        read_only,
        json!({ "level": "read", "granted": "read", "hits": 0, "noted": null })
    );
    let writer = in_conversation(&engine, "writer", "sub-w", "c-w");
    let noted = call(
        &engine,
        &writer,
        "ctx__kb_note",
        json!({ "text": "refunds" }),
    )
    .await
    .unwrap();
    assert_eq!(noted["level"], "read");
    assert_eq!(noted["granted"], "write");
    assert_eq!(noted["noted"]["ok"]["document"]["filename"], "queries.md");
    assert_eq!(noted["noted"]["ok"]["document"]["content"], "refunds");
    // The next search finds what the first one wrote.
    let again = call(
        &engine,
        &writer,
        "ctx__kb_note",
        json!({ "text": "refunds" }),
    )
    .await
    .unwrap();
    assert_eq!(again["hits"], 1, "{again}");

    // Every call is audited, with the tool, the subscriber, the level it ran at and what
    // it answered; never a document's content.
    let log = captured.text();
    let audited: Vec<&str> = log
        .lines()
        .filter(|line| line.contains("knowledge."))
        .collect();
    assert_eq!(audited.len(), 5, "{log}");
    let reader_search = audited[0];
    for expected in [
        r#"source="ctx:kb_note""#,
        r#"subscriber="sub-r""#,
        "event=knowledge.search",
        r#""level":"read""#,
        r#""query":"refunds""#,
        r#""count":0"#,
    ] {
        assert!(
            reader_search.contains(expected),
            "{expected} in {reader_search}"
        );
    }
    let write = audited[2];
    for expected in [
        r#"subscriber="sub-w""#,
        "event=knowledge.write",
        r#""level":"write""#,
        r#""filename":"queries.md""#,
        r#""bytes":7"#,
        r#""created":true"#,
    ] {
        assert!(write.contains(expected), "{expected} in {write}");
    }
    // The second note updates its own document.
    assert!(audited[4].contains(r#""created":false"#), "{}", audited[4]);
}

#[tokio::test]
async fn writes_are_owned_by_their_plugin_and_refused_with_a_reason_never_an_error() {
    let dir = temp_dir("owned");
    let engine = knowledge_engine(
        &dir,
        "[agents.w]\nknowledge = \"write\"\n[agents.m]\nknowledge = \"manage\"\n",
    );
    let writer = engine.turn("w").unwrap();
    let created = call(
        &engine,
        &writer,
        "ctx__kb_write",
        json!({ "filename": "faq.md", "content": "Refunds take five days." }),
    )
    .await
    .unwrap();
    assert_eq!(created["ok"]["created"], true, "{created}");
    assert_eq!(
        (
            &created["ok"]["document"]["origin"],
            &created["ok"]["document"]["origin_ref"]
        ),
        (&json!("plugin"), &json!("ctx")),
        "the engine records the plugin"
    );
    let id = created["ok"]["document"]["id"].as_i64().unwrap();
    let updated = call(
        &engine,
        &writer,
        "ctx__kb_write",
        json!({ "filename": "faq.md", "content": "Refunds take three days." }),
    )
    .await
    .unwrap();
    assert_eq!(updated["ok"]["created"], false);

    let hits = call(
        &engine,
        &writer,
        "ctx__kb_search",
        json!({ "text": "refunds (three) \"days" }),
    )
    .await
    .unwrap();
    assert_eq!(
        hits,
        json!(["faq.md"]),
        "free text, quotes and parentheses included, is searched safely"
    );
    assert_eq!(
        call(&engine, &writer, "ctx__kb_get", json!({ "id": id }))
            .await
            .unwrap(),
        "Refunds take three days."
    );
    assert_eq!(
        call(&engine, &writer, "ctx__kb_get", json!({ "id": 999 }))
            .await
            .unwrap(),
        Value::Null
    );

    let too_large = call(
        &engine,
        &writer,
        "ctx__kb_write",
        json!({ "filename": "big.md", "content": "x".repeat(65) }),
    )
    .await
    .unwrap();
    assert_eq!(
        too_large["refused"],
        json!({ "reason": "too_large", "size": 65, "limit": 64 })
    );
    for name in ["b.md", "c.md"] {
        call(
            &engine,
            &writer,
            "ctx__kb_write",
            json!({ "filename": name, "content": "x" }),
        )
        .await
        .unwrap();
    }
    let full = call(
        &engine,
        &writer,
        "ctx__kb_write",
        json!({ "filename": "d.md", "content": "x" }),
    )
    .await
    .unwrap();
    assert_eq!(
        full["refused"],
        json!({ "reason": "limit_reached", "limit": 3 })
    );
    let missing = call(&engine, &writer, "ctx__kb_delete", json!({ "id": 999 }))
        .await
        .unwrap();
    assert_eq!(missing["refused"], json!({ "reason": "not_found" }));
}

#[tokio::test]
async fn below_manage_a_plugin_updates_only_its_own_documents() {
    use plugin_sdk::engine::{KnowledgeStore, Scope};
    use plugin_sdk::knowledge::{KnowledgeLevel, Origin, Refusal};
    let dir = temp_dir("manage");
    let store =
        engine_sqlite::SqliteKnowledge::open(&dir.join("k.sqlite"), Default::default()).unwrap();
    let scope = |namespace: &str, level| Scope::plugin("a", namespace, level);
    let theirs = store
        .write(
            &scope("other-plugin", KnowledgeLevel::Write),
            "theirs.md",
            "v1",
        )
        .await
        .unwrap();
    let id = theirs.document.id;
    let mine = scope("ctx", KnowledgeLevel::Write);
    assert_eq!(
        store.write(&mine, "theirs.md", "v2").await,
        Err(Refusal::NotOwned)
    );
    assert_eq!(store.delete(&mine, id).await, Err(Refusal::NotOwned));
    assert_eq!(
        store
            .write(&scope("ctx", KnowledgeLevel::Read), "new.md", "x")
            .await,
        Err(Refusal::NotGranted)
    );
    let manager = scope("ctx", KnowledgeLevel::Manage);
    let updated = store.write(&manager, "theirs.md", "v2").await.unwrap();
    assert_eq!(
        (
            updated.document.origin,
            updated.document.origin_ref.as_str()
        ),
        (Origin::Plugin, "other-plugin"),
        "managing keeps the author"
    );
    assert_eq!(
        store.delete(&manager, id).await.unwrap().document.content,
        "v2"
    );
    // Each agent reaches its own documents only.
    let elsewhere = Scope {
        agent: "b".into(),
        ..mine.clone()
    };
    store.write(&mine, "mine.md", "x").await.unwrap();
    let theirs = store.list(&elsewhere, 10, None).await.unwrap();
    assert!(theirs.documents.is_empty());
    let ours = store.list(&mine, 10, None).await.unwrap();
    assert_eq!(ours.documents.len(), 1);
}

#[tokio::test]
async fn a_read_fails_on_a_store_error_which_is_not_not_found() {
    use plugin_sdk::engine::{KnowledgeStore, Scope};
    use plugin_sdk::knowledge::KnowledgeLevel;
    let dir = temp_dir("broken");
    let path = dir.join("k.sqlite");
    let store = engine_sqlite::SqliteKnowledge::open(&path, Default::default()).unwrap();
    let scope = Scope::plugin("a", "ctx", KnowledgeLevel::Write);
    assert_eq!(store.get(&scope, 1).await, Ok(None));
    // Another connection breaks the store under it.
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch("DROP TABLE documents_fts; DROP TABLE documents;")
        .unwrap();
    let error = store.get(&scope, 1).await.expect_err("a store error");
    assert!(error.to_string().contains("could not answer"), "{error}");
    assert!(store.search(&scope, "x", 5).await.is_err());
    assert_eq!(
        store.write(&scope, "x.md", "x").await,
        Err(plugin_sdk::knowledge::Refusal::Unavailable),
        "a mutation still answers"
    );
}

/// A store in a fresh directory, under `limits`, and a scope that writes as `ctx`.
fn store_with(
    name: &str,
    limits: engine_core::config::KnowledgeLimits,
) -> (engine_sqlite::SqliteKnowledge, std::path::PathBuf) {
    let path = temp_dir(name).join("k.sqlite");
    let store = engine_sqlite::SqliteKnowledge::open(&path, limits).unwrap();
    (store, path)
}

fn writer(agent: &str) -> plugin_sdk::engine::Scope {
    plugin_sdk::engine::Scope::plugin(agent, "ctx", plugin_sdk::knowledge::KnowledgeLevel::Write)
}

#[tokio::test]
async fn a_search_with_more_distinct_words_than_the_cap_is_invalid_arguments_naming_it() {
    let dir = temp_dir("words");
    let engine = knowledge_engine(
        &dir,
        "max_search_words = 3\n[agents.w]\nknowledge = \"write\"\n",
    );
    let turn = engine.turn("w").unwrap();
    call(
        &engine,
        &turn,
        "ctx__kb_write",
        json!({ "filename": "faq.md", "content": "Refunds take days." }),
    )
    .await
    .unwrap();
    // Repeated words, in any case, count once.
    let hits = call(
        &engine,
        &turn,
        "ctx__kb_search",
        json!({ "text": "refunds Refunds REFUNDS take days days" }),
    )
    .await
    .unwrap();
    assert_eq!(hits, json!(["faq.md"]));
    let refused = call(
        &engine,
        &turn,
        "ctx__kb_search",
        json!({ "text": "refunds take days weeks" }),
    )
    .await
    .expect_err("four distinct words, three allowed");
    assert_eq!(refused.kind(), engine_core::CallErrorKind::InvalidArguments);
    assert!(
        refused.message().contains("4 distinct words") && refused.message().contains("at most 3"),
        "{refused}"
    );
}

#[tokio::test]
async fn a_search_finds_only_its_agents_documents_whatever_the_names_hold() {
    use plugin_sdk::engine::KnowledgeStore;
    let (store, _) = store_with("agents", Default::default());
    // Names a tokenizer would split, or that are a prefix of another.
    for agent in ["a", "a b", "a-b", "ab", "é"] {
        store
            .write(&writer(agent), &format!("{agent}.md"), "shared words here")
            .await
            .unwrap();
    }
    for agent in ["a", "a b", "a-b", "ab", "é"] {
        let hits = store.search(&writer(agent), "shared", 10).await.unwrap();
        let names: Vec<&str> = hits.iter().map(|hit| hit.filename.as_str()).collect();
        assert_eq!(names, [format!("{agent}.md")], "agent {agent:?}");
    }
}

#[tokio::test]
async fn ids_are_never_reused_and_filenames_are_capped() {
    use plugin_sdk::engine::KnowledgeStore;
    use plugin_sdk::knowledge::Refusal;
    let limits = engine_core::config::KnowledgeLimits {
        max_filename_bytes: 8,
        ..Default::default()
    };
    let (store, _) = store_with("ids", limits);
    let scope = writer("a");
    let first = store
        .write(&scope, "one.md", "1")
        .await
        .unwrap()
        .document
        .id;
    let second = store
        .write(&scope, "two.md", "2")
        .await
        .unwrap()
        .document
        .id;
    store.delete(&scope, second).await.unwrap();
    let third = store
        .write(&scope, "three.md", "3")
        .await
        .unwrap()
        .document
        .id;
    assert!(
        third > second && second > first,
        "a deleted id is not given again: {first}, {second}, {third}"
    );
    assert_eq!(
        store.delete(&scope, second).await,
        Err(Refusal::NotFound),
        "the deleted id names nothing"
    );
    assert_eq!(
        store.write(&scope, "nine.txt1", "x").await,
        Err(Refusal::NameTooLong { size: 9, limit: 8 })
    );
}

#[tokio::test]
async fn the_store_keeps_a_write_ahead_log() {
    let (_store, path) = store_with("wal", Default::default());
    let mode: String = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("PRAGMA journal_mode", [], |row| row.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

#[tokio::test]
async fn a_damaged_database_file_stops_start_up_with_an_error_that_says_so() {
    let dir = temp_dir("damaged");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("knowledge.sqlite"), vec![0x5a; 64 << 10]).unwrap();
    let config = engine_core::config::EngineConfig::parse(&format!(
        "data_dir = {:?}\n[agents.w]\nknowledge = \"write\"\n",
        dir.display().to_string()
    ))
    .unwrap();
    let error = match engine_core::Engine::builder()
        .backends(engine::default_backends())
        .config(config)
        .build()
    {
        Ok(_) => panic!("a damaged store must stop start-up"),
        Err(error) => error.to_string(),
    };
    assert!(
        error.contains("knowledge.sqlite")
            && error.contains("damaged or is not an SQLite database")
            && error.contains("restore it from a backup"),
        "{error}"
    );
}

#[tokio::test]
async fn a_database_another_process_keeps_locked_refuses_writes_within_the_busy_timeout() {
    use plugin_sdk::engine::KnowledgeStore;
    use plugin_sdk::knowledge::Refusal;
    let limits = engine_core::config::KnowledgeLimits {
        busy_timeout_ms: 100,
        ..Default::default()
    };
    let (store, path) = store_with("locked", limits);
    let scope = writer("a");
    store.write(&scope, "before.md", "x").await.unwrap();
    let other = rusqlite::Connection::open(&path).unwrap();
    other.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let started = Instant::now();
    assert_eq!(
        store.write(&scope, "during.md", "x").await,
        Err(Refusal::Unavailable)
    );
    // It waited its 100 ms, not the default 5 s.
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(100) && waited < Duration::from_secs(2),
        "the write waited {waited:?}"
    );
    // Reads go on: a write-ahead log lets readers past a writer.
    assert_eq!(
        store.list(&scope, 10, None).await.unwrap().documents.len(),
        1
    );
    other.execute_batch("COMMIT").unwrap();
    assert!(store.write(&scope, "after.md", "x").await.is_ok());
}

#[tokio::test]
async fn a_write_abandoned_while_the_database_is_locked_frees_its_connection_at_once() {
    use plugin_sdk::engine::KnowledgeStore;
    // One connection, and the longest busy timeout: only stopping the abandoned write's
    // wait frees the connection for the read below before the minute is up.
    let limits = engine_core::config::KnowledgeLimits {
        connections: 1,
        busy_timeout_ms: engine_core::config::MAX_BUSY_TIMEOUT_MS,
        ..Default::default()
    };
    let (store, path) = store_with("abandoned-wait", limits);
    let scope = writer("a");
    store.write(&scope, "before.md", "x").await.unwrap();
    let other = rusqlite::Connection::open(&path).unwrap();
    other.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let write = store.write(&scope, "during.md", "x");
    assert!(
        tokio::time::timeout(Duration::from_millis(200), write)
            .await
            .is_err(),
        "the write waits for the lock"
    );
    // The lock is still held: a read (which a write-ahead log lets past a writer) gets
    // the one connection only if the abandoned write gave it back.
    let read = tokio::time::timeout(Duration::from_secs(10), store.list(&scope, 10, None)).await;
    assert_eq!(
        read.expect("the read got the connection")
            .unwrap()
            .documents
            .len(),
        1,
        "the abandoned write wrote nothing"
    );
    other.execute_batch("COMMIT").unwrap();
    assert!(store.write(&scope, "after.md", "x").await.is_ok());
}

#[tokio::test]
async fn a_search_or_list_answers_at_most_the_maximum_whatever_the_limit() {
    use engine_core::stores::MAX_ANSWERED_DOCUMENTS;
    use plugin_sdk::engine::KnowledgeStore;
    let (store, path) = store_with("answers", Default::default());
    fill(&path, "a", MAX_ANSWERED_DOCUMENTS + 1, "refunds");
    let scope = writer("a");
    let first = store.list(&scope, usize::MAX, None).await.unwrap();
    assert_eq!(first.documents.len(), MAX_ANSWERED_DOCUMENTS);
    // The cursor goes past the maximum: the one document left, and no page after it.
    let rest = store
        .list(&scope, usize::MAX, first.next.as_ref())
        .await
        .unwrap();
    assert_eq!(rest.documents.len(), 1, "{:?}", first.next);
    assert_eq!(rest.next, None);
    let mut names: Vec<&str> = first
        .documents
        .iter()
        .chain(&rest.documents)
        .map(|summary| summary.filename.as_str())
        .collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), MAX_ANSWERED_DOCUMENTS + 1, "each listed once");
    assert_eq!(
        store
            .search(&scope, "refunds", usize::MAX)
            .await
            .unwrap()
            .len(),
        MAX_ANSWERED_DOCUMENTS
    );
    // Below the maximum, the limit asked for holds.
    assert_eq!(
        store.list(&scope, 3, None).await.unwrap().documents.len(),
        3
    );
}

/// Fills `agent`'s knowledge base in `path` with `count` documents, each holding every
/// word of `words`: a search for them matches, ranks and snippets every one.
fn fill(path: &std::path::Path, agent: &str, count: usize, words: &str) {
    rusqlite::Connection::open(path)
        .unwrap()
        .execute(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
             INSERT INTO documents (agent, filename, content, origin, origin_ref)
             SELECT ?2, 'doc' || i || '.md', ?3 || ' ' || i, 'plugin', 'ctx' FROM n",
            rusqlite::params![count as i64, agent, words],
        )
        .unwrap();
}

/// An engine whose store has one connection and so many matching documents that a
/// search takes a while; answers it, a turn and the search's arguments.
fn slow_search(name: &str) -> (Engine, engine_core::Turn, String) {
    let dir = temp_dir(name);
    // One connection: only stopping the search frees it for the next call.
    let engine = engine(&format!(
        "data_dir = {:?}\n[knowledge]\nconnections = 1\n[agents.w]\nknowledge = \"write\"\n",
        dir.display().to_string()
    ));
    let turn = engine.turn("w").unwrap();
    let words: Vec<String> = (0..32).map(|n| format!("w{n}")).collect();
    let words = words.join(" ");
    fill(&dir.join("knowledge.sqlite"), "w", 50_000, &words);
    (engine, turn, json!({ "text": words }).to_string())
}

/// How long the search takes when nothing stops it: the faster of two runs (the second
/// is warm), and long enough that a stop at an eighth of it lands inside the search.
async fn whole(engine: &Engine, turn: &engine_core::Turn, search: &str) -> Duration {
    let mut fastest = Duration::MAX;
    for _ in 0..2 {
        let started = Instant::now();
        let call = engine_core::Call::new("ctx__kb_search", search);
        engine.call(turn, call).await.expect("the search succeeds");
        fastest = fastest.min(started.elapsed());
    }
    assert!(
        fastest >= Duration::from_millis(300),
        "the search takes {fastest:?}: too quick to be stopped half-way; add documents"
    );
    fastest
}

/// How long a read waits after a search was stopped: about nothing when the search was
/// stopped, the rest of the search when it was left to run.
async fn next_read(engine: &Engine, turn: &engine_core::Turn) -> Duration {
    let started = Instant::now();
    let read = call(engine, turn, "ctx__kb_get", json!({ "id": 1 })).await;
    assert!(read.is_ok(), "{read:?}");
    started.elapsed()
}

// The read after a stopped search is compared with the whole search, measured in the
// same test on the same machine: a ratio, not a figure that depends on the machine.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_past_its_deadline_is_stopped_and_frees_the_connection() {
    let (engine, turn, search) = slow_search("interrupted");
    let whole = whole(&engine, &turn, &search).await;
    let started = Instant::now();
    let deadline = tokio::time::Instant::now() + whole / 8;
    let answer = engine
        .call(
            &turn,
            engine_core::Call::new("ctx__kb_search", &search).deadline(deadline),
        )
        .await;
    assert_eq!(
        answer.expect_err("past its deadline").kind(),
        engine_core::CallErrorKind::TimedOut
    );
    assert!(started.elapsed() < whole / 8 + Duration::from_secs(5));
    let waited = next_read(&engine, &turn).await;
    assert!(
        waited < whole / 2,
        "the read waited {waited:?}: the search went on (it takes {whole:?})"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_search_is_stopped_and_frees_the_connection() {
    let (engine, turn, search) = slow_search("cancelled");
    let whole = whole(&engine, &turn, &search).await;
    let token = engine_core::CancellationToken::new();
    let canceller = token.clone();
    // The caller gives up while the search runs.
    tokio::spawn(async move {
        tokio::time::sleep(whole / 8).await;
        canceller.cancel();
    });
    let started = Instant::now();
    let answer = engine
        .call(
            &turn,
            engine_core::Call::new("ctx__kb_search", &search).cancel_on(&token),
        )
        .await;
    assert_eq!(
        answer.expect_err("cancelled").kind(),
        engine_core::CallErrorKind::Cancelled
    );
    assert!(started.elapsed() < whole / 8 + Duration::from_secs(5));
    let waited = next_read(&engine, &turn).await;
    assert!(
        waited < whole / 2,
        "the read waited {waited:?}: the search went on (it takes {whole:?})"
    );
}

#[tokio::test]
async fn a_store_made_by_an_earlier_version_is_migrated_with_its_documents() {
    use plugin_sdk::engine::KnowledgeStore;
    let path = temp_dir("migrated").join("k.sqlite");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    // The first schema, as the engine made it before the store had versions.
    let earlier = rusqlite::Connection::open(&path).unwrap();
    earlier
        .execute_batch(include_str!(
            "../../../engine-sqlite/src/knowledge/migrations/001_documents.sql"
        ))
        .unwrap();
    earlier
        .execute_batch(
            "INSERT INTO documents (id, agent, filename, content, origin)
             VALUES (7, 'a', 'faq.md', 'Refunds take five days.', 'ctx'),
                    (9, 'b', 'faq.md', 'Refunds take a week.', 'ctx');",
        )
        .unwrap();
    drop(earlier);
    let store = engine_sqlite::SqliteKnowledge::open(&path, Default::default()).unwrap();
    let hits = store.search(&writer("a"), "refunds", 10).await.unwrap();
    assert_eq!(
        hits.iter().map(|hit| hit.id).collect::<Vec<_>>(),
        [7],
        "indexed again, by agent"
    );
    let next = store.write(&writer("a"), "new.md", "x").await.unwrap();
    assert!(next.document.id > 9, "{}", next.document.id);
    // A document from before origins had kinds was a plugin's, its namespace the
    // reference: that plugin still owns it.
    let kept = store.get(&writer("a"), 7).await.unwrap().unwrap();
    assert_eq!(
        (kept.origin, kept.origin_ref.as_str()),
        (plugin_sdk::knowledge::Origin::Plugin, "ctx")
    );
    let updated = store.write(&writer("a"), "faq.md", "Five.").await.unwrap();
    assert_eq!((updated.document.id, updated.created), (7, false));
}

/// A store of an engine's own that implements what tools reach and leaves `wipe` out:
/// the memory store's answers, but for that.
struct WithoutWipe(engine_core::stores::MemoryKnowledge);

impl plugin_sdk::engine::KnowledgeStore for WithoutWipe {
    fn search<'a>(
        &'a self,
        scope: &'a plugin_sdk::engine::Scope,
        query: &'a str,
        limit: usize,
    ) -> plugin_sdk::engine::BoxFuture<
        'a,
        Result<Vec<plugin_sdk::knowledge::SearchHit>, plugin_sdk::knowledge::SearchError>,
    > {
        self.0.search(scope, query, limit)
    }

    fn get<'a>(
        &'a self,
        scope: &'a plugin_sdk::engine::Scope,
        id: i64,
    ) -> plugin_sdk::engine::BoxFuture<
        'a,
        Result<Option<plugin_sdk::knowledge::Document>, plugin_sdk::knowledge::KnowledgeError>,
    > {
        self.0.get(scope, id)
    }

    fn list<'a>(
        &'a self,
        scope: &'a plugin_sdk::engine::Scope,
        limit: usize,
        after: Option<&'a plugin_sdk::knowledge::ListCursor>,
    ) -> plugin_sdk::engine::BoxFuture<
        'a,
        Result<plugin_sdk::knowledge::Listing, plugin_sdk::knowledge::KnowledgeError>,
    > {
        self.0.list(scope, limit, after)
    }

    fn write<'a>(
        &'a self,
        scope: &'a plugin_sdk::engine::Scope,
        filename: &'a str,
        content: &'a str,
    ) -> plugin_sdk::engine::BoxFuture<'a, plugin_sdk::knowledge::Mutation> {
        self.0.write(scope, filename, content)
    }

    fn delete<'a>(
        &'a self,
        scope: &'a plugin_sdk::engine::Scope,
        id: i64,
    ) -> plugin_sdk::engine::BoxFuture<'a, plugin_sdk::knowledge::Mutation> {
        self.0.delete(scope, id)
    }
}

#[tokio::test]
async fn a_store_that_leaves_an_operation_out_answers_unsupported_and_changes_nothing() {
    use plugin_sdk::engine::KnowledgeStore;
    use plugin_sdk::knowledge::Refusal;
    let store = WithoutWipe(engine_core::stores::MemoryKnowledge::new(Default::default()));
    store.write(&writer("a"), "faq.md", "x").await.unwrap();
    let refused = store.wipe("a").await;
    assert_eq!(refused, Err(Refusal::Unsupported));
    // The seed's name for it, as a tool or the dev bridge hands it on.
    assert_eq!(
        serde_json::to_value(Refusal::Unsupported).unwrap(),
        json!({ "reason": "unsupported" })
    );
    assert_eq!(
        Refusal::Unsupported.to_string(),
        "the knowledge store does not do this"
    );
    let kept = store.list(&writer("a"), 10, None).await.unwrap();
    assert_eq!(kept.documents.len(), 1, "nothing wiped");
}
