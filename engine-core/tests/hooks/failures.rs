//! Failures: a hook that panics, fails, hangs or blocks is logged and the turn goes on,
//! unless the hook declares `fail_closed`; a plain `fn` hook has a few runs under way at
//! once at most, and is skipped while a thread of it is left behind.

use std::sync::atomic::Ordering;
use std::time::Duration;

use engine_core::{Engine, TurnEnd};
use plugin_sdk::hook::Event;

use crate::pre_model_hooks::{
    BLOCKS_AGAIN, BLOCKS_AGAIN_STARTS, BLOCKS_SLOWLY, BLOCKS_SLOWLY_STARTS, BLOCKS_SYNC,
    GUARD_BLOCKS,
};
use crate::support::{engine, run, run_turn, turn_in, Captured};

/// How long a test waits for what should take milliseconds, before it fails.
const BOUND: Duration = Duration::from_secs(10);

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
        "the turn goes on as if it observed",
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
    // Were the turn to wait for the hook, the gate would open at the bound and the hook
    // would halt the turn: the test fails instead of hanging.
    let _gate = BLOCKS_SYNC.opened_by_the_end(BOUND);
    let engine = engine(&["blocks_sync", "inject_a"]);
    let (outcome, _) = run(&engine, "hello", false, &["hi"]).await;
    assert!(!BLOCKS_SYNC.is_open(), "the turn waited for the hook");
    assert_eq!(outcome.end, TurnEnd::Generated);
    assert_eq!(outcome.injected, ["A"]);
    assert_eq!(outcome.reply, "hi");
    assert_eq!(
        engine.hooks(Event::MessageReceived)[0].threads_left_behind(),
        1
    );
}

/// Waits, within [`BOUND`], until `engine`'s first `message_received` hook has no thread
/// left behind.
async fn until_no_thread_is_left_behind(engine: &Engine) {
    let hook = &engine.hooks(Event::MessageReceived)[0];
    tokio::time::timeout(BOUND, async {
        while hook.threads_left_behind() > 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the hook's thread returned once its gate opened");
}

#[tokio::test]
async fn a_blocking_hook_left_behind_is_not_started_again_until_its_thread_returns() {
    let captured = Captured::default();
    let _logging = captured.start();
    let gate = BLOCKS_AGAIN.opened_by_the_end(BOUND);
    let engine = engine(&["blocks_again", "inject_a"]);
    let hook = &engine.hooks(Event::MessageReceived)[0];
    assert_eq!(hook.id(), "turns:blocks_again");

    let (outcome, _) = run(&engine, "first", false, &["hi"]).await;
    assert_eq!(outcome.injected, ["A"]);
    assert_eq!(BLOCKS_AGAIN_STARTS.load(Ordering::SeqCst), 1);
    assert_eq!((hook.threads_left_behind(), hook.skipped_runs()), (1, 0));

    // Two more turns while its thread still blocks: the hook is skipped, and the turns
    // go on as if it observed.
    for turn in 1..=2 {
        let (outcome, _) = run(&engine, "again", false, &["hi"]).await;
        assert_eq!(outcome.injected, ["A"]);
        assert_eq!(hook.skipped_runs(), turn);
    }
    assert_eq!(BLOCKS_AGAIN_STARTS.load(Ordering::SeqCst), 1);
    assert_eq!(hook.threads_left_behind(), 1);
    let log = captured.text();
    assert!(
        log.contains("turns:blocks_again")
            && log.contains("runs of the hook from other turns are under way")
            && log.contains("skipped=2"),
        "{log}"
    );

    // Once its thread returns, the next turn starts it again.
    drop(gate);
    until_no_thread_is_left_behind(&engine).await;
    run(&engine, "and again", false, &["hi"]).await;
    assert_eq!(BLOCKS_AGAIN_STARTS.load(Ordering::SeqCst), 2);
    assert_eq!(hook.skipped_runs(), 2);
}

#[tokio::test]
async fn concurrent_turns_start_a_blocking_hook_a_few_times_at_once_and_skip_it_past_that() {
    /// The engine's cap on the runs of a plain-`fn` hook under way at once.
    const AT_ONCE: usize = 4;
    const TURNS: usize = AT_ONCE + 3;
    let captured = Captured::default();
    let _logging = captured.start();
    let gate = BLOCKS_SLOWLY.opened_by_the_end(BOUND);
    let engine = engine(&["blocks_slowly", "inject_a"]);
    let hook = &engine.hooks(Event::MessageReceived)[0];
    assert_eq!(hook.id(), "turns:blocks_slowly");

    // All at once, within the hook's first timeout: before any run was left behind.
    let turns: Vec<_> = (0..TURNS)
        .map(|n| turn_in(&engine, &format!("concurrent-{n}"), "en-US"))
        .collect();
    let outcomes = futures::future::join_all(
        turns
            .iter()
            .map(|turn| run_turn(&engine, turn, "concurrent", false, &["hi"])),
    )
    .await;
    assert!(!BLOCKS_SLOWLY.is_open(), "a turn waited for the hook");
    for (outcome, _) in outcomes {
        assert_eq!(outcome.end, TurnEnd::Generated);
        assert_eq!(outcome.injected, ["A"]);
    }
    // The first turns took every permit and left their threads behind; the others
    // waited for a permit until the timeout, and skipped the hook.
    assert_eq!(
        (hook.threads_left_behind(), hook.skipped_runs()),
        (AT_ONCE, (TURNS - AT_ONCE) as u64)
    );
    let log = captured.text();
    assert!(
        log.contains("turns:blocks_slowly")
            && log.contains("runs of the hook from other turns are under way")
            && log.contains(&format!("skipped={}", TURNS - AT_ONCE)),
        "{log}"
    );

    drop(gate);
    until_no_thread_is_left_behind(&engine).await;
    assert_eq!(BLOCKS_SLOWLY_STARTS.load(Ordering::SeqCst), AT_ONCE);
    // Once its threads returned, the next turn starts it again.
    run(&engine, "again", false, &["hi"]).await;
    assert_eq!(BLOCKS_SLOWLY_STARTS.load(Ordering::SeqCst), AT_ONCE + 1);
}

#[tokio::test]
async fn a_guard_that_fails_closed_halts_the_turn_whether_it_errs_panics_or_hangs() {
    for (guard, first) in [
        ("guard_fails", false),
        ("guard_panics", false),
        ("guard_panics_sync", false),
        ("guard_hangs", true),
    ] {
        let captured = Captured::default();
        let _logging = captured.start();
        let engine = engine(&[guard, "inject_a"]);
        let (outcome, asked) = run(&engine, "hello", first, &["never"]).await;
        assert!(asked.is_empty(), "{guard}: the model was asked: {asked:?}");
        assert_eq!(outcome.reply, "The guard failed.", "{guard}");
        assert_eq!(
            outcome.end,
            TurnEnd::FailedClosed {
                hook: format!("turns:{guard}")
            }
        );
        // The message the guard did not vet stays out of the history.
        assert!(!outcome.persist, "{guard}");
        let log = captured.text();
        assert!(
            log.contains(&format!("turns:{guard}")) && log.contains("the hook fails closed"),
            "{guard}: {log}"
        );
    }
}

#[tokio::test]
async fn a_guard_that_fails_closed_halts_at_its_timeout_and_while_it_is_left_behind() {
    let _gate = GUARD_BLOCKS.opened_by_the_end(BOUND);
    let engine = engine(&["guard_blocks", "inject_a"]);
    for locale in ["it-IT", "en-US"] {
        let turn = turn_in(&engine, "a_guard_that_fails_closed", locale);
        let (outcome, asked) = run_turn(&engine, &turn, "hello", false, &["never"]).await;
        assert!(asked.is_empty(), "the model was asked: {asked:?}");
        assert_eq!(
            outcome.end,
            TurnEnd::FailedClosed {
                hook: "turns:guard_blocks".into()
            }
        );
        let expected = match locale {
            "it-IT" => "La guardia non è disponibile; riprova.",
            _ => "The guard is unavailable; please try again.",
        };
        assert_eq!(outcome.reply, expected);
    }
    // The first turn timed out; the second found it still running.
    let hook = &engine.hooks(Event::MessageReceived)[0];
    assert_eq!((hook.threads_left_behind(), hook.skipped_runs()), (1, 1));
    assert!(!GUARD_BLOCKS.is_open(), "a turn waited for the guard");
}
