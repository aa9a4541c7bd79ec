//! Failures: a hook that panics, fails, hangs or blocks is logged and the turn goes on.

use std::time::Duration;

use engine_core::TurnEnd;

use crate::pre_model_hooks::GATE;
use crate::support::{engine, run, Captured};

#[tokio::test]
async fn a_hook_that_panics_or_fails_is_logged_and_treated_as_observe() {
    let captured = Captured::default();
    let _logging = captured.start();
    let engine = engine(&["panics_sync", "panics_async", "fails", "inject_a"]);
    let (outcome, _) = run(&engine, "hello", false, &["hi"]).await;
    assert_eq!(outcome.injected, ["A"]);
    assert_eq!(outcome.reply, "hi");
    let log = captured.text();
    for expected in [
        "turns:panics_sync",
        "the sync hook fell over",
        "turns:panics_async",
        "the async hook fell over",
        "turns:fails",
        "the store is down",
    ] {
        assert!(
            log.contains(expected),
            "`{expected}` is not in the log:\n{log}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn an_async_hook_past_its_timeout_is_logged_and_the_turn_goes_on() {
    let captured = Captured::default();
    let _logging = captured.start();
    let engine = engine(&["hangs_async", "inject_a"]);
    let started = tokio::time::Instant::now();
    let (outcome, _) = run(&engine, "hello", false, &["hi"]).await;
    assert_eq!(outcome.injected, ["A"]);
    assert_eq!(outcome.end, TurnEnd::Generated);
    // The paused clock moved by the hook's timeout, not by its hour-long sleep.
    assert_eq!(started.elapsed(), Duration::from_millis(50));
    let log = captured.text();
    assert!(
        log.contains("turns:hangs_async") && log.contains("past its timeout"),
        "{log}"
    );
}

#[tokio::test]
async fn a_blocking_sync_hook_is_left_behind_at_its_timeout() {
    let engine = engine(&["blocks_sync", "inject_a"]);
    let (outcome, _) = run(&engine, "hello", false, &["hi"]).await;
    // The hook is still blocked: the turn finished without it.
    assert!(!*GATE.0.lock().unwrap());
    assert_eq!(outcome.injected, ["A"]);
    assert_eq!(outcome.reply, "hi");
    let (open, opened) = &GATE;
    *open.lock().unwrap() = true;
    opened.notify_all();
}
