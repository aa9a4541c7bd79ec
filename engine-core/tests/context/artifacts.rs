//! Artifacts: handed over within one conversation, taken once, bounded in size and
//! lifetime.

use std::sync::Arc;
use std::time::Duration;

use engine_core::CallErrorKind;
use plugin_sdk::ToolErrorKind;
use serde_json::{json, Value};

use crate::support::{call, call_bare, engine, in_conversation, kind};

#[tokio::test]
async fn an_artifact_is_taken_once_only_in_its_conversation() {
    let engine = engine("[agents.a]\n");
    let here = in_conversation(&engine, "a", "s", "here");
    let there = in_conversation(&engine, "a", "s", "there");
    let handle = call(
        &engine,
        &here,
        "ctx__artifact_put",
        json!({ "text": "quote" }),
    )
    .await
    .unwrap();
    let handle = handle.as_str().unwrap().to_owned();
    assert_eq!(handle.len(), 32, "128 random bits in hex");
    let take = |turn| {
        call(
            &engine,
            turn,
            "ctx__artifact_take",
            json!({ "handle": handle }),
        )
    };
    // Another conversation gets nothing, and does not consume it.
    assert_eq!(take(&there).await.unwrap(), Value::Null);
    assert_eq!(take(&here).await.unwrap(), "quote");
    // Taken: gone, with the same answer as an unknown handle.
    assert_eq!(take(&here).await.unwrap(), Value::Null);
    let unknown = call(
        &engine,
        &here,
        "ctx__artifact_take",
        json!({ "handle": "0".repeat(32) }),
    )
    .await;
    assert_eq!(unknown.unwrap(), Value::Null);
    // Outside a conversation there are no artifacts. The engine no longer offers a tool
    // that reads artifacts in a turn without a conversation: it is unknown there (it used
    // to fail). Its extractor, given a context without a conversation, still fails.
    let session = engine.turn("a").unwrap();
    assert_eq!(
        kind(
            call(
                &engine,
                &session,
                "ctx__artifact_put",
                json!({ "text": "x" })
            )
            .await
        ),
        CallErrorKind::UnknownTool
    );
    let outside = call_bare("ctx:artifact_put", json!({ "text": "x" }))
        .await
        .expect_err("no artifacts");
    assert_eq!(outside.kind(), ToolErrorKind::Failed);
    assert!(
        outside.message().contains("outside a conversation"),
        "{outside:?}"
    );
}

#[tokio::test]
async fn put_fails_clearly_over_the_size_limit_and_when_the_store_is_full() {
    // An artifact of this tool costs its bytes and 179 more (its name, its type, its
    // conversation's id, its handle and the entry): room for one of 8 bytes.
    let engine =
        engine("[artifacts]\nmax_bytes = 8\ncapacity_bytes = 200\nttl_secs = 60\n[agents.a]\n");
    let turn = in_conversation(&engine, "a", "s", "c");
    let too_large = call(
        &engine,
        &turn,
        "ctx__artifact_put",
        json!({ "text": "123456789" }),
    )
    .await;
    let error = too_large.expect_err("too large");
    assert!(
        error
            .message()
            .contains("9 bytes, and the engine accepts at most 8"),
        "{}",
        error.message()
    );
    call(
        &engine,
        &turn,
        "ctx__artifact_put",
        json!({ "text": "12345678" }),
    )
    .await
    .unwrap();
    let full = call(
        &engine,
        &turn,
        "ctx__artifact_put",
        json!({ "text": "12345" }),
    )
    .await;
    assert!(full.expect_err("full").message().contains("store is full"));
}

#[tokio::test]
async fn a_tool_keeps_an_artifact_for_its_own_ttl_within_the_engines() {
    let engine = engine("[artifacts]\nttl_secs = 3600\n[agents.a]\n");
    let turn = in_conversation(&engine, "a", "s", "c");
    let put = |text: &str, ttl_ms: u64| {
        call(
            &engine,
            &turn,
            "ctx__artifact_put_for",
            json!({ "text": text, "ttl_ms": ttl_ms }),
        )
    };
    let take = |handle: Value| {
        call(
            &engine,
            &turn,
            "ctx__artifact_take",
            json!({ "handle": handle }),
        )
    };
    let brief = put("brief", 50).await.unwrap();
    let long = put("long", u64::MAX).await.unwrap();
    tokio::time::sleep(Duration::from_millis(120)).await;
    assert_eq!(
        take(brief).await.unwrap(),
        Value::Null,
        "expired after its 50 ms"
    );
    // Asked for ever, kept for the engine's hour: still there.
    assert_eq!(take(long).await.unwrap(), "long");
}

#[test]
fn an_artifact_expires_after_the_capped_ttl() {
    use plugin_sdk::artifacts::Artifact;
    let limits = engine_core::config::ArtifactLimits {
        max_bytes: 100,
        capacity_bytes: 1000,
        ttl_secs: 0,
        ..Default::default()
    };
    let store = engine_core::stores::MemoryArtifacts::new(limits);
    let artifact = Artifact {
        bytes: b"x".to_vec(),
        filename: "x".into(),
        mime: "text/plain".into(),
    };
    // Asked for an hour, capped at zero: expired at once.
    let handle = store
        .put("c", artifact, Some(Duration::from_secs(3600)))
        .unwrap();
    assert_eq!(store.take("c", &handle), None);
}

#[test]
fn of_many_concurrent_takes_of_one_handle_exactly_one_gets_it() {
    use plugin_sdk::artifacts::Artifact;
    let store = Arc::new(engine_core::stores::MemoryArtifacts::new(Default::default()));
    for _ in 0..20 {
        let artifact = Artifact {
            bytes: b"once".to_vec(),
            filename: "f".into(),
            mime: "text/plain".into(),
        };
        let handle = store.put("c", artifact, None).unwrap();
        let barrier = Arc::new(std::sync::Barrier::new(16));
        let takers: Vec<_> = (0..16)
            .map(|_| {
                let (store, handle, barrier) =
                    (Arc::clone(&store), handle.clone(), Arc::clone(&barrier));
                std::thread::spawn(move || {
                    barrier.wait();
                    store.take("c", &handle).is_some()
                })
            })
            .collect();
        let got = takers
            .into_iter()
            .map(|taker| taker.join().unwrap())
            .filter(|got| *got)
            .count();
        assert_eq!(got, 1);
    }
}

fn text_artifact(filename: &str) -> plugin_sdk::artifacts::Artifact {
    plugin_sdk::artifacts::Artifact {
        bytes: Vec::new(),
        filename: filename.into(),
        mime: "text/plain".into(),
    }
}

#[test]
fn empty_artifacts_fill_the_store_by_their_names_and_long_names_are_refused() {
    use plugin_sdk::artifacts::ArtifactError;
    let limits = engine_core::config::ArtifactLimits {
        max_name_bytes: 200,
        capacity_bytes: 2_000,
        ..Default::default()
    };
    let store = engine_core::stores::MemoryArtifacts::new(limits);
    let name = "n".repeat(200);
    let mut kept = 0;
    while store.put("c", text_artifact(&name), None).is_ok() {
        kept += 1;
        assert!(kept < 100, "zero-byte artifacts never fill the store");
    }
    assert!(store.held_bytes() <= 2_000 && kept >= 1, "{kept} kept");
    assert_eq!(
        store.put("c", text_artifact(&"n".repeat(201)), None),
        Err(ArtifactError::NameTooLong {
            what: "filename",
            size: 201,
            limit: 200
        })
    );
    let mut long_type = text_artifact("f");
    long_type.mime = "t".repeat(201);
    assert!(matches!(
        store.put("c", long_type, None),
        Err(ArtifactError::NameTooLong {
            what: "MIME type",
            ..
        })
    ));
}

#[test]
fn expired_artifacts_are_freed_by_the_next_put_even_when_the_store_is_not_full() {
    let limits = engine_core::config::ArtifactLimits {
        ttl_secs: 0,
        ..Default::default()
    };
    let store = engine_core::stores::MemoryArtifacts::new(limits);
    store.put("c", text_artifact("first"), None).unwrap();
    let one = store.held_bytes();
    assert!(one > 0);
    // The first expired at once; the second put frees it, and holds only itself.
    store.put("c", text_artifact("other"), None).unwrap();
    assert_eq!(store.held_bytes(), one);
}

#[test]
fn a_huge_ttl_is_accepted_and_the_artifact_kept() {
    let limits = engine_core::config::ArtifactLimits {
        ttl_secs: u64::MAX,
        ..Default::default()
    };
    let store = engine_core::stores::MemoryArtifacts::new(limits);
    let handle = store
        .put("c", text_artifact("f"), Some(Duration::MAX))
        .unwrap();
    let again = store.put("c", text_artifact("g"), None).unwrap();
    assert!(store.take("c", &handle).is_some());
    assert!(store.take("c", &again).is_some());
}
