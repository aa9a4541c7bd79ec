//! Hooks chosen per agent: only the hooks an agent lists run in its turns, at its
//! positions and timeouts, and only its turns lose streaming to a hook that mutates.

use std::time::Duration;

use engine_core::config::EngineConfig;
use engine_core::{Engine, EngineError};
use plugin_sdk::hook::Event;
use plugin_sdk::prelude::*;

use crate::support::run_turn;

/// Injects "slow" once it has waited a while.
#[define_hook(event = "message_received", position = 40, timeout_ms = 5000)]
async fn slow_inject() -> PreModelOutcome {
    tokio::time::sleep(Duration::from_millis(300)).await;
    PreModelOutcome::InjectContext("slow".into())
}

/// The hooks these tests choose from, beside those of the other sections.
const HOOKS: [&str; 4] = ["inject_a", "inject_b", "slow_inject", "replace_dirty"];

fn build(config: &str) -> Result<Engine, EngineError> {
    let hooks = HOOKS.iter().map(|name| {
        plugin_sdk::engine::linked_hooks()
            .find(|hook| hook.name == *name)
            .unwrap()
    });
    Engine::builder()
        .config(EngineConfig::parse(config).expect("the configuration parses"))
        .hooks(hooks)
        .build()
}

const CONFIG: &str = "[agents.everything]\n\
    [agents.chooser]\n\
    hooks = [{ id = \"turns:inject_b\", position = 1 }, \"turns:inject_a\", { id = \"turns:slow_inject\", timeout_ms = 50 }]\n";

#[tokio::test]
async fn an_agent_runs_only_the_hooks_it_lists_at_its_positions_and_timeouts() {
    let engine = build(CONFIG).unwrap();
    let everything = engine
        .turn("everything")
        .unwrap()
        .in_conversation("s", "per-agent-1");
    let (_, asked) = run_turn(&engine, &everything, "hello", false, &["hi"]).await;
    assert_eq!(asked[0].injected_context, ["A", "B", "slow"]);

    let chooser = engine
        .turn("chooser")
        .unwrap()
        .in_conversation("s", "per-agent-2");
    let (_, asked) = run_turn(&engine, &chooser, "hello", false, &["hi"]).await;
    // `inject_b` first at the agent's position, `slow_inject` stopped at the agent's
    // 50 ms (it declares 5000), `replace_dirty` not listed: it never runs.
    assert_eq!(asked[0].injected_context, ["B", "A"]);
    let (outcome, _) = run_turn(&engine, &chooser, "hello", false, &["dirty"]).await;
    assert_eq!(
        outcome.reply, "dirty",
        "the agent does not run the replacing hook"
    );

    let agent = engine.agent("chooser").unwrap();
    let listed: Vec<(&str, u32, u128)> = agent
        .hooks(Event::MessageReceived)
        .iter()
        .map(|hook| (hook.id(), hook.position(), hook.timeout().as_millis()))
        .collect();
    assert_eq!(
        listed,
        [
            ("turns:inject_b", 1, 2000),
            ("turns:inject_a", 20, 2000),
            ("turns:slow_inject", 40, 50)
        ]
    );
}

#[tokio::test]
async fn only_the_agents_that_run_a_mutating_hook_lose_streaming() {
    let engine = build(CONFIG).unwrap();
    assert!(engine.hooks_mutate_responses(), "a linked hook mutates");
    assert!(engine.agent("everything").unwrap().hooks_mutate_responses());
    assert!(!engine.agent("chooser").unwrap().hooks_mutate_responses());
    for (agent, streams) in [("everything", false), ("chooser", true)] {
        let turn = engine
            .turn(agent)
            .unwrap()
            .in_conversation("s", "per-agent-3");
        let (_, asked) = run_turn(&engine, &turn, "hello", false, &["hi"]).await;
        assert_eq!(asked[0].stream, streams, "{agent}");
    }
}

#[test]
fn start_up_refuses_a_hook_list_naming_what_is_not_linked_twice_or_past_its_timeout() {
    let error = build(
        "[agents.a]\n\
         hooks = [\"turns:inject_a\", \"turns:nope\", \"turns:inject_a\", { id = \"turns:slow_inject\", timeout_ms = 6000 }, { id = \"turns:inject_b\", timeout_ms = 0 }]\n",
    )
    .err()
    .expect("refused");
    assert!(matches!(error, EngineError::Config(_)), "{error}");
    let text = error.to_string();
    for expected in [
        "`agents.a.hooks.1` names `turns:nope`, which no linked plugin defines",
        "`agents.a.hooks.2` names `turns:inject_a` a second time",
        "`agents.a.hooks.3.timeout_ms` is 6000 ms, more than the 5000 ms `turns:slow_inject` declares",
        "`agents.a.hooks.4.timeout_ms` is 0, which no hook can run within",
    ] {
        assert!(text.contains(expected), "`{expected}` in:\n{text}");
    }
}
