//! After the model: replacements, regenerations and their cap, streaming, and what was
//! sent.

use engine_core::{Limits, TurnEnd};

use crate::response_hooks::{COUNTS_SEEN, SENT};
use crate::support::{engine, engine_with, run, run_turn, turn_in, Captured};

#[tokio::test]
async fn regeneration_beats_a_replacement_in_the_same_pass() {
    let engine = engine(&["replace_dirty", "regenerate_dirty"]);
    let (outcome, asked) = run(&engine, "hello", false, &["dirty", "clean"]).await;
    assert_eq!(asked.len(), 2);
    assert_eq!(outcome.reply, "clean");
    assert_eq!(outcome.end, TurnEnd::Generated);
    assert_eq!(outcome.regenerations, 1);
}

#[tokio::test]
async fn at_the_cap_a_regeneration_is_refused_and_the_last_reply_is_kept() {
    let engine = engine(&["regenerate_dirty"]);
    let (outcome, asked) = run(
        &engine,
        "hello",
        false,
        &["dirty 1", "dirty 2", "dirty 3", "dirty 4"],
    )
    .await;
    // Default cap 2: the first generation and two replays.
    assert_eq!(
        asked
            .iter()
            .map(|input| input.regeneration)
            .collect::<Vec<_>>(),
        [0, 1, 2]
    );
    assert_eq!(outcome.reply, "dirty 3");
    assert_eq!(outcome.regenerations, 2);
    assert_eq!(outcome.end, TurnEnd::Generated);
    // The hook never passed that reply: the turn's staged actions are not performed.
    assert_eq!(
        outcome.regeneration_refused.as_deref(),
        Some("turns:regenerate_dirty")
    );
}

#[tokio::test]
async fn the_cap_is_configurable_and_at_the_cap_the_passes_replacement_is_sent() {
    let engine = engine_with(
        &["replace_dirty", "regenerate_dirty"],
        Limits {
            max_regenerations: 4,
            ..Limits::default()
        },
    );
    let (outcome, asked) = run(&engine, "hello", false, &["dirty"]).await;
    assert_eq!(asked.len(), 5);
    assert_eq!(outcome.regenerations, 4);
    assert_eq!(outcome.reply, "replaced");
    assert_eq!(
        outcome.end,
        TurnEnd::Replaced {
            hook: "turns:replace_dirty".into()
        }
    );
}

#[tokio::test]
async fn hooks_see_the_regeneration_count_from_zero() {
    let engine = engine(&["regenerate_dirty", "record_counts"]);
    let conversation = "hooks_see_the_regeneration_count_from_zero";
    let turn = turn_in(&engine, conversation, "en-US");
    run_turn(&engine, &turn, "hello", false, &["dirty", "dirty", "fine"]).await;
    assert_eq!(COUNTS_SEEN.of(conversation), ["0", "1", "2"]);
}

#[tokio::test]
async fn a_mutating_hook_makes_the_turn_non_streamed() {
    let (_, asked) = run(&engine(&["observe_only"]), "hello", false, &["hi"]).await;
    assert!(asked[0].stream, "an observing hook keeps streaming");
    let (_, asked) = run(&engine(&["replace_dirty"]), "hello", false, &["hi"]).await;
    assert!(!asked[0].stream, "a mutating hook turns streaming off");
}

#[tokio::test]
async fn response_sent_hooks_observe_the_reply_as_sent() {
    let engine = engine(&["record_sent"]);
    let conversation = "response_sent_hooks_observe_the_reply_as_sent";
    let turn = turn_in(&engine, conversation, "en-US");
    engine.response_sent(&turn, "hello", "sent text").await;
    assert_eq!(SENT.of(conversation), ["sent text"]);
}

#[tokio::test]
async fn the_guard_regenerates_a_dirty_reply_twice_then_replaces_it() {
    let engine = engine(&["dirty_output_guard"]);
    let (outcome, asked) = run(&engine, "hello", false, &["bad \u{FFFD}"]).await;
    assert_eq!(asked.len(), 3);
    assert!(!asked[0].stream);
    assert_eq!(outcome.reply, guard::APOLOGY);
    assert_eq!(
        outcome.end,
        TurnEnd::Replaced {
            hook: "guard:dirty_output_guard".into()
        }
    );

    let (outcome, asked) = run(&engine, "hello", false, &["bad \u{FFFD}", "Hello!"]).await;
    assert_eq!(asked.len(), 2);
    assert_eq!(outcome.reply, "Hello!");
    assert_eq!(outcome.end, TurnEnd::Generated);
}

#[tokio::test]
async fn a_reply_guard_that_fails_closed_withholds_the_reply_and_beats_a_regeneration() {
    let engine = engine(&["regenerate_dirty", "reply_guard_fails"]);
    let (outcome, asked) = run(&engine, "hello", false, &["dirty"]).await;
    assert_eq!(asked.len(), 1, "the turn was replayed: {asked:?}");
    assert!(
        !asked[0].stream,
        "a guard that may withhold the reply turns streaming off"
    );
    assert_eq!(outcome.reply, "The reply could not be checked.");
    assert_eq!(
        outcome.end,
        TurnEnd::FailedClosed {
            hook: "turns:reply_guard_fails".into()
        }
    );
}

#[tokio::test]
async fn a_reply_guard_that_fails_closed_withholds_the_reply_whether_it_panics_or_hangs() {
    for guard in ["reply_guard_panics", "reply_guard_hangs"] {
        let captured = Captured::default();
        let _logging = captured.start();
        let engine = engine(&[guard]);
        let (outcome, asked) = run(&engine, "hello", false, &["unchecked"]).await;
        assert_eq!(asked.len(), 1, "{guard}: the turn was replayed: {asked:?}");
        assert_eq!(outcome.reply, "The reply could not be checked.", "{guard}");
        assert_eq!(
            outcome.end,
            TurnEnd::FailedClosed {
                hook: format!("turns:{guard}")
            }
        );
        let log = captured.text();
        assert!(
            log.contains(&format!("turns:{guard}")) && log.contains("the hook fails closed"),
            "{guard}: {log}"
        );
    }
}
