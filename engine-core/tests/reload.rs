//! Reloading the configuration of a running engine: agents come and go, a turn keeps
//! the agent it started with, a bad configuration changes nothing, what only a restart
//! applies is refused, new secrets are redacted from the log, MCP clients are told.
//!
//! This test binary links only the tool defined here.

use engine_core::config::EngineConfig;
use engine_core::{Call, CallErrorKind, Engine, EngineError, LogRedaction};
use plugin_sdk::engine::Redact;
use plugin_sdk::prelude::*;

plugin_sdk::plugin! {
    namespace = "rl",
    engine = ">=0.1",
}

/// What to say.
#[derive(Deserialize, JsonSchema, ToolArgs)]
struct Say {
    text: String,
}

/// Says it back.
#[define_tool]
async fn echo(say: Say) -> String {
    say.text
}

fn config(text: &str) -> EngineConfig {
    EngineConfig::parse(text).expect("the configuration parses")
}

const ONE_AGENT: &str = "[agents.a]\ntools = [\"rl:echo\"]\n";

async fn echo_in(engine: &Engine, turn: &engine_core::Turn) -> Result<String, CallErrorKind> {
    engine
        .call(turn, Call::new("rl__echo", r#"{"text":"hi"}"#))
        .await
        .map_err(|error| error.kind())
}

#[tokio::test]
async fn a_reload_adds_and_removes_agents_and_a_turn_keeps_the_agent_it_started_with() {
    let engine = Engine::builder()
        .backends(engine::default_backends())
        .config(config(ONE_AGENT))
        .build()
        .unwrap();
    let before = engine.turn("a").unwrap();

    let reloaded = engine
        .reload(config("[agents.a]\ntools = []\n[agents.b]\n"))
        .expect("the reload is applied");
    assert_eq!(reloaded.added, ["b"]);
    assert!(reloaded.removed.is_empty());
    assert_eq!(reloaded.kept, ["a"]);

    let names: Vec<String> = engine
        .agents()
        .iter()
        .map(|agent| agent.name().to_owned())
        .collect();
    assert_eq!(names, ["a", "b"]);
    // The turn made before the reload finishes on the agent it started with...
    assert_eq!(echo_in(&engine, &before).await, Ok("\"hi\"".to_owned()));
    // ...and the next turn of `a` no longer equips the tool.
    let after = engine.turn("a").unwrap();
    assert_eq!(
        echo_in(&engine, &after).await,
        Err(CallErrorKind::UnknownTool)
    );
    assert_eq!(engine.agent("a").unwrap().tools().count(), 0);

    let reloaded = engine.reload(config("[agents.b]\n")).unwrap();
    assert_eq!(reloaded.removed, ["a"]);
    assert!(engine.agent("a").is_none());
    assert!(engine.turn("a").is_err());
}

#[tokio::test]
async fn a_configuration_with_a_problem_is_refused_whole_and_the_engine_keeps_its_own() {
    let engine = Engine::builder()
        .backends(engine::default_backends())
        .config(config(ONE_AGENT))
        .build()
        .unwrap();
    let refused = engine
        .reload(config(
            "[agents.a]\ntools = []\n[agents.b]\ntools = [\"rl:missing\"]\n",
        ))
        .expect_err("an unknown tool is a problem");
    assert!(matches!(refused, EngineError::Config(_)), "{refused}");
    assert!(refused.to_string().contains("rl:missing"), "{refused}");
    assert!(engine.agent("b").is_none());
    let turn = engine.turn("a").unwrap();
    assert_eq!(echo_in(&engine, &turn).await, Ok("\"hi\"".to_owned()));
}

#[test]
fn a_change_only_a_restart_applies_is_refused_with_what_needs_it() {
    let engine = Engine::builder()
        .backends(engine::default_backends())
        .config(config(ONE_AGENT))
        .build()
        .unwrap();
    let refused = engine
        .reload(config(&format!(
            "data_dir = \"elsewhere\"\n[artifacts]\nmax_bytes = 1000\n{ONE_AGENT}[agents.b]\n"
        )))
        .expect_err("the data directory and the artifact store are opened at start-up");
    let EngineError::NeedsRestart(what) = &refused else {
        panic!("not a restart: {refused}");
    };
    assert_eq!(what, &["`data_dir`", "`[artifacts]`"], "{refused}");
    assert!(engine.agent("b").is_none(), "nothing of it was applied");

    let refused = engine
        .reload(config(&format!(
            "{ONE_AGENT}[agents.b]\nknowledge = \"read\"\n"
        )))
        .expect_err("no knowledge store was opened at start-up");
    assert!(
        refused.to_string().contains("opened no knowledge store"),
        "{refused}"
    );
}

#[test]
fn a_reload_widens_the_log_redaction_with_the_secrets_it_brings_and_keeps_the_old_ones() {
    // The provider reads the agent's `key`: a secret something reads.
    // An agent with turns keeps conversations on disk: in a directory of the test's.
    let data = std::env::temp_dir().join(format!("engine-reload-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    let with_key = |value: &str| {
        config(&format!(
            "data_dir = {data:?}\n[providers.p]\nwire = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\n\
             model = \"m\"\napi_key_secret = \"key\"\n\
             [agents.a]\nsecrets = {{ key = {value:?} }}\n[agents.a.turn]\nprovider = \"p\"\n"
        ))
    };
    let first = with_key("first-secret-value");
    let log = LogRedaction::new(engine_core::redactor(&first));
    let engine = Engine::builder()
        .backends(engine::default_backends())
        .config(first)
        .log_redaction(log.clone())
        .build()
        .unwrap();
    let line = "first-secret-value and second-secret-value";
    assert_eq!(
        log.current().redact(line),
        "[REDACTED] and second-secret-value"
    );
    engine.reload(with_key("second-secret-value")).unwrap();
    // The old value may still be in a line about the old configuration.
    assert_eq!(log.current().redact(line), "[REDACTED] and [REDACTED]");
    drop(engine);
    let _ = std::fs::remove_dir_all(&data);
}

#[test]
fn mcp_clients_are_told_after_a_reload_and_not_after_a_refused_one() {
    let engine = Engine::builder()
        .backends(engine::default_backends())
        .config(config(ONE_AGENT))
        .build()
        .unwrap();
    let mut changed = engine.extensions_changed();
    changed.mark_unchanged();
    assert!(engine
        .reload(config("[agents.a]\ntools = [\"rl:nope\"]\n"))
        .is_err());
    assert!(!changed.has_changed().unwrap());
    engine.reload(config("[agents.a]\ntools = []\n")).unwrap();
    assert!(changed.has_changed().unwrap());
}

#[tokio::test]
async fn a_session_sees_its_agents_new_tools_and_is_refused_once_the_agent_is_removed() {
    let engine = Engine::builder()
        .backends(engine::default_backends())
        .config(config(&format!("{ONE_AGENT}[agents.b]\n")))
        .build()
        .unwrap();
    let session = engine.session("a").unwrap();
    let turn = engine.turn_in(&session).unwrap();
    assert_eq!(echo_in(&engine, &turn).await, Ok("\"hi\"".to_owned()));

    engine
        .reload(config("[agents.a]\ntools = []\n[agents.b]\n"))
        .unwrap();
    let turn = engine.turn_in(&session).unwrap();
    assert_eq!(
        echo_in(&engine, &turn).await,
        Err(CallErrorKind::UnknownTool)
    );
    assert_eq!(engine.session_agent(&session).unwrap().tools().count(), 0);

    engine.reload(config("[agents.b]\n")).unwrap();
    let refused = engine.turn_in(&session).expect_err("the agent is gone");
    assert_eq!(refused.name, "a");
    assert!(engine.session_like(&session).is_err());
    assert!(engine.session_agent(&session).is_err());
}

#[tokio::test]
async fn the_first_agent_that_runs_turns_opens_the_conversation_store_start_up_would_have() {
    let data = std::env::temp_dir().join(format!("engine-reload-turns-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    let engine = Engine::builder()
        .backends(engine::default_backends())
        .config(config(&format!("data_dir = {data:?}\n{ONE_AGENT}")))
        .build()
        .unwrap();
    assert!(!data.join("conversations.sqlite").exists());
    engine
        .reload(config(&format!(
            "data_dir = {data:?}\n{ONE_AGENT}\
             [providers.p]\nwire = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n\
             [agents.helper.turn]\nprovider = \"p\"\n"
        )))
        .expect("a provider and an agent with turns are added");
    assert!(data.join("conversations.sqlite").exists());
    assert_eq!(engine.conversation("none-yet").await.unwrap(), []);
    drop(engine);
    let _ = std::fs::remove_dir_all(&data);
}
