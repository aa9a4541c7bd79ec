//! Before the model: injections accumulate in order, and the first halt ends the turn.

use engine_core::{TurnEnd, TurnOutcome};
use plugin_sdk::hook::Event;

use crate::pre_model_hooks::RECEIVED;
use crate::support::{engine, run, run_turn, turn_in};

#[tokio::test]
async fn injections_accumulate_in_position_order_across_both_pre_model_events() {
    // Listed out of order: the engine orders them.
    let engine = engine(&["inject_b", "inject_a", "first_turn_context"]);
    let (outcome, asked) = run(&engine, "hello", true, &["hi"]).await;
    let expected = vec!["first turn".to_owned(), "A".into(), "B".into()];
    assert_eq!(outcome.injected, expected);
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].injected_context, expected);
    assert_eq!(outcome.reply, "hi");
    assert_eq!(outcome.end, TurnEnd::Generated);

    // conversation_start runs only on the conversation's first turn.
    let (later, _) = run(&engine, "hello again", false, &["hi"]).await;
    assert_eq!(later.injected, ["A", "B"]);
}

#[tokio::test]
async fn equal_positions_run_in_hook_id_order_whatever_the_link_order() {
    for names in [["tie_a", "tie_b"], ["tie_b", "tie_a"]] {
        let (outcome, _) = run(&engine(&names), "hello", false, &["hi"]).await;
        assert_eq!(outcome.injected, ["tie_a", "tie_b"]);
    }
    let engine = engine(&["tie_b", "tie_a"]);
    let order: Vec<&str> = engine
        .hooks(Event::MessageReceived)
        .iter()
        .map(|hook| hook.id())
        .collect();
    assert_eq!(order, ["turns:tie_a", "turns:tie_b"]);
}

#[tokio::test]
async fn the_first_halt_ends_the_turn_before_the_model_and_later_hooks_do_not_run() {
    let engine = engine(&["inject_a", "halt_on_stop", "record_received"]);
    let conversation = "the_first_halt_ends_the_turn";
    let turn = turn_in(&engine, conversation, "en-US");
    let (outcome, asked) = run_turn(&engine, &turn, "stop", false, &["never"]).await;
    assert!(asked.is_empty(), "the model was asked: {asked:?}");
    assert_eq!(
        outcome,
        TurnOutcome {
            reply: "stopped".into(),
            persist: false,
            end: TurnEnd::Halted {
                hook: "turns:halt_on_stop".into()
            },
            injected: Vec::new(),
            regenerations: 0,
            regeneration_refused: None,
        }
    );
    assert_eq!(RECEIVED.of(conversation), Vec::<String>::new());

    // Without a halt, the later hook runs.
    run_turn(&engine, &turn, "go on", false, &["ok"]).await;
    assert_eq!(RECEIVED.of(conversation), ["go on"]);
}

#[tokio::test]
async fn a_halt_at_conversation_start_skips_message_received_and_persists_by_choice() {
    let engine = engine(&["halt_at_start", "record_received"]);
    let conversation = "a_halt_at_conversation_start";
    let turn = turn_in(&engine, conversation, "en-US");
    let (outcome, asked) = run_turn(&engine, &turn, "halt at start", true, &["never"]).await;
    assert!(asked.is_empty(), "the model was asked: {asked:?}");
    assert_eq!(
        outcome.end,
        TurnEnd::Halted {
            hook: "turns:halt_at_start".into()
        }
    );
    assert_eq!(outcome.reply, "halted at start");
    assert!(outcome.persist);
    // No `message_received` hook ran.
    assert_eq!(RECEIVED.of(conversation), Vec::<String>::new());

    // A first turn that does not halt runs them.
    run_turn(&engine, &turn, "hello", true, &["hi"]).await;
    assert_eq!(RECEIVED.of(conversation), ["hello"]);
}
