//! State: a call's writes apply only when it succeeds, per conversation, and a call
//! reads the snapshot taken when it started.

use engine_core::CallErrorKind;
use serde_json::{json, Value};

use crate::support::{call, call_bare, engine, in_conversation, kind};

fn put(key: &str, value: &str, fail: bool, wait_ms: u64) -> Value {
    json!({ "key": key, "value": value, "fail": fail, "wait_ms": wait_ms })
}

#[tokio::test]
async fn state_writes_apply_only_when_the_call_succeeds() {
    let engine = engine("[agents.a]\n");
    let turn = in_conversation(&engine, "a", "s", "c");
    // The call reads its own write.
    assert_eq!(
        call(&engine, &turn, "ctx__state_put", put("x", "1", false, 0))
            .await
            .unwrap(),
        "1"
    );
    assert_eq!(
        call(&engine, &turn, "ctx__state_get", json!({ "key": "x" }))
            .await
            .unwrap(),
        "1"
    );
    // A failed call's write is dropped.
    assert_eq!(
        kind(call(&engine, &turn, "ctx__state_put", put("x", "2", true, 0)).await),
        CallErrorKind::Failed
    );
    assert_eq!(
        call(&engine, &turn, "ctx__state_get", json!({ "key": "x" }))
            .await
            .unwrap(),
        "1"
    );
    // Outside a conversation there is no state to read or write. The engine no longer
    // offers a tool that reads state in a turn without a conversation: it is unknown
    // there. Its extractor, given a context without a conversation, still says why.
    let session = engine.turn("a").unwrap();
    let outside = call(&engine, &session, "ctx__state_get", json!({ "key": "x" })).await;
    assert_eq!(kind(outside), CallErrorKind::UnknownTool);
    let outside = call_bare("ctx:state_get", json!({ "key": "x" })).await;
    assert!(outside
        .expect_err("no state")
        .message()
        .contains("outside a conversation"));
    // Another conversation has its own state.
    let other = in_conversation(&engine, "a", "s", "another");
    assert_eq!(
        call(&engine, &other, "ctx__state_get", json!({ "key": "x" }))
            .await
            .unwrap(),
        Value::Null
    );
}

#[tokio::test]
async fn two_calls_in_one_turn_see_each_others_writes_only_once_the_first_has_finished() {
    let engine = engine("[agents.a]\n");
    let turn = in_conversation(&engine, "a", "s", "c");
    // In sequence: the second sees the first's write.
    call(
        &engine,
        &turn,
        "ctx__state_put",
        put("first", "done", false, 0),
    )
    .await
    .unwrap();
    assert_eq!(
        call(&engine, &turn, "ctx__state_get", json!({ "key": "first" }))
            .await
            .unwrap(),
        "done"
    );

    // In parallel: the reader started from the snapshot taken before the writer finished.
    let writer = call(
        &engine,
        &turn,
        "ctx__state_put",
        put("parallel", "late", false, 50),
    );
    let reader = call(
        &engine,
        &turn,
        "ctx__state_get",
        json!({ "key": "parallel" }),
    );
    let (written, read) = tokio::join!(writer, reader);
    assert_eq!(written.unwrap(), "late");
    assert_eq!(read.unwrap(), Value::Null);
    assert_eq!(
        call(
            &engine,
            &turn,
            "ctx__state_get",
            json!({ "key": "parallel" })
        )
        .await
        .unwrap(),
        "late"
    );
}

/// The message of a call that failed, checking it failed as a tool failure.
fn failure(result: Result<Value, engine_core::CallError>) -> String {
    let error = result.expect_err("the call fails");
    assert_eq!(error.kind(), CallErrorKind::Failed, "{error}");
    error.message().to_owned()
}

#[tokio::test]
async fn writes_past_the_key_or_value_limit_fail_the_call_and_none_of_them_is_kept() {
    let engine = engine("[state]\nmax_keys = 2\nmax_value_bytes = 10\n[agents.a]\n");
    let turn = in_conversation(&engine, "a", "s", "c");
    for key in ["a", "b"] {
        call(&engine, &turn, "ctx__state_put", put(key, "1", false, 0))
            .await
            .unwrap();
    }
    let message = failure(call(&engine, &turn, "ctx__state_put", put("c", "1", false, 0)).await);
    assert!(
        message.contains("ctx__state_put")
            && message.contains("3 keys")
            && message.contains("at most 2"),
        "{message}"
    );
    let get = |key: &'static str| call(&engine, &turn, "ctx__state_get", json!({ "key": key }));
    assert_eq!(get("c").await.unwrap(), Value::Null);
    // "0123456789" is 12 bytes as JSON.
    let message = failure(
        call(
            &engine,
            &turn,
            "ctx__state_put",
            put("a", "0123456789", false, 0),
        )
        .await,
    );
    assert!(
        message.contains("12 bytes") && message.contains("at most 10"),
        "{message}"
    );
    assert_eq!(get("a").await.unwrap(), "1");
    // Replacing a key at the key limit is no new key.
    call(&engine, &turn, "ctx__state_put", put("a", "2", false, 0))
        .await
        .unwrap();
    assert_eq!(get("a").await.unwrap(), "2");
}

#[tokio::test]
async fn a_conversation_past_its_bytes_or_the_engine_past_its_capacity_is_refused() {
    // Each conversation below costs its overhead (640), its id twice (2) and one key and
    // value (2 + 42) with the key's overhead (96): 782 bytes; a second key makes it 922.
    let engine = engine(
        "[state]\nmax_value_bytes = 100\nmax_conversation_bytes = 900\ncapacity_bytes = 1600\n[agents.a]\n",
    );
    let value = "v".repeat(40);
    let first = in_conversation(&engine, "a", "s", "c");
    call(
        &engine,
        &first,
        "ctx__state_put",
        put("k1", &value, false, 0),
    )
    .await
    .unwrap();
    let message = failure(
        call(
            &engine,
            &first,
            "ctx__state_put",
            put("k2", &value, false, 0),
        )
        .await,
    );
    assert!(
        message.contains("922 bytes") && message.contains("at most 900"),
        "{message}"
    );
    let second = in_conversation(&engine, "a", "s", "d");
    call(
        &engine,
        &second,
        "ctx__state_put",
        put("k1", &value, false, 0),
    )
    .await
    .unwrap();
    let third = in_conversation(&engine, "a", "s", "e");
    let message = failure(
        call(
            &engine,
            &third,
            "ctx__state_put",
            put("k1", &value, false, 0),
        )
        .await,
    );
    assert!(message.contains("state is full"), "{message}");
}

// The store keeps Tokio's clock, paused here: it moves only when the test moves it.
#[tokio::test(start_paused = true)]
async fn an_idle_conversations_state_is_dropped_whole_and_frees_its_room() {
    // Idle after a second, and room for one conversation (742 bytes).
    let engine = engine(
        "[state]\nidle_secs = 1\nmax_value_bytes = 100\nmax_conversation_bytes = 900\ncapacity_bytes = 900\n[agents.a]\n",
    );
    let first = in_conversation(&engine, "a", "s", "c");
    call(&engine, &first, "ctx__state_put", put("k", "v", false, 0))
        .await
        .unwrap();
    let second = in_conversation(&engine, "a", "s", "d");
    assert!(
        failure(call(&engine, &second, "ctx__state_put", put("k", "v", false, 0)).await)
            .contains("state is full"),
        "the first conversation is not idle yet"
    );
    tokio::time::advance(std::time::Duration::from_secs(2)).await;
    call(&engine, &second, "ctx__state_put", put("k", "v", false, 0))
        .await
        .expect("the idle conversation made room");
    assert_eq!(
        call(&engine, &first, "ctx__state_get", json!({ "key": "k" }))
            .await
            .unwrap(),
        Value::Null
    );
}
