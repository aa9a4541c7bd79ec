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
