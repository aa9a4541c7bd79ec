//! Knowledge, on the real SQLite store: levels decide what is equipped, writes are owned
//! by their plugin, and refusals are answers, never errors.

use engine_core::Engine;
use serde_json::{json, Value};

use crate::support::{call, engine};

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
        created["ok"]["document"]["origin"], "ctx",
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
    use plugin_sdk::knowledge::{KnowledgeLevel, Refusal};
    let dir = temp_dir("manage");
    let store =
        engine_core::stores::SqliteKnowledge::open(&dir.join("k.sqlite"), Default::default())
            .unwrap();
    let scope = |origin: &str, level| Scope {
        agent: "a".into(),
        origin: origin.into(),
        level,
    };
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
        updated.document.origin, "other-plugin",
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
    assert!(store.list(&elsewhere, 10).await.unwrap().is_empty());
    assert_eq!(store.list(&mine, 10).await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_read_fails_on_a_store_error_which_is_not_not_found() {
    use plugin_sdk::engine::{KnowledgeStore, Scope};
    use plugin_sdk::knowledge::KnowledgeLevel;
    let dir = temp_dir("broken");
    let path = dir.join("k.sqlite");
    let store = engine_core::stores::SqliteKnowledge::open(&path, Default::default()).unwrap();
    let scope = Scope {
        agent: "a".into(),
        origin: "ctx".into(),
        level: KnowledgeLevel::Write,
    };
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
