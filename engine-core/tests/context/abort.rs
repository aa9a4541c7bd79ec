//! The abort signal: a body without `.await` sees its deadline, and work handed to a
//! thread or a task is told when the engine stops waiting.

use std::time::{Duration, Instant};

use engine_core::{Call, CallErrorKind};
use serde_json::{json, Value};

use crate::support::{engine, in_conversation};
use crate::tools::HANDED_OFF;

/// Waits until the hand-off keyed `key` reports what it saw.
async fn handed_off(key: &str) -> &'static str {
    for _ in 0..3000 {
        let seen = HANDED_OFF
            .lock()
            .unwrap()
            .iter()
            .find(|(held, _)| held == key)
            .map(|(_, seen)| *seen);
        if let Some(seen) = seen {
            return seen;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the hand-off `{key}` never reported")
}

#[tokio::test]
async fn a_body_without_await_stops_when_its_deadline_passes() {
    let engine = engine("[agents.a]\n");
    let turn = in_conversation(&engine, "a", "s", "c");
    let deadline = Instant::now() + Duration::from_millis(100);
    let output = engine
        .call(
            &turn,
            Call::new("ctx__spin_until_aborted", "{}").deadline(deadline.into()),
        )
        .await
        .unwrap();
    let output: Value = serde_json::from_str(&output).unwrap();
    assert_eq!(
        output,
        json!({ "stopped": "aborted", "knew_deadline": true })
    );
    assert!(
        Instant::now() >= deadline,
        "it stopped at the deadline, not before"
    );
}

#[tokio::test]
async fn a_thread_the_tool_handed_work_to_is_told_at_the_deadline() {
    let engine = engine("[agents.a]\n");
    let turn = in_conversation(&engine, "a", "s", "c");
    let deadline = Instant::now() + Duration::from_millis(100);
    let arguments = json!({ "text": "thread at deadline" }).to_string();
    let call = Call::new("ctx__hand_off_and_wait", &arguments).deadline(deadline.into());
    let error = engine.call(&turn, call).await.unwrap_err();
    assert_eq!(error.kind(), CallErrorKind::TimedOut);
    assert_eq!(handed_off("thread at deadline").await, "aborted");
}

#[tokio::test]
async fn a_task_awaiting_the_signal_is_woken_when_the_turn_is_cancelled() {
    let engine = engine("[agents.a]\n");
    let turn = in_conversation(&engine, "a", "s", "c");
    let cancel = tokio_util::sync::CancellationToken::new();
    let arguments = json!({ "text": "task on cancel" }).to_string();
    let call = Call::new("ctx__spawn_and_wait", &arguments).cancel_on(&cancel);
    let cancelling = async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        cancel.cancel();
    };
    let (result, ()) = tokio::join!(engine.call(&turn, call), cancelling);
    assert_eq!(result.unwrap_err().kind(), CallErrorKind::Cancelled);
    assert_eq!(handed_off("task on cancel").await, "woken");
}
