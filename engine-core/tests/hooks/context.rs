//! What a hook takes besides its payload: the turn's identity, the conversation's state
//! (kept with the turn), its declared secrets, model access, the audit logger and the
//! abort signal.

use std::time::Duration;

use engine_core::config::EngineConfig;
use engine_core::{Engine, Limits};
use plugin_sdk::prelude::*;

use crate::support::{run_turn, Captured, Record};

static SEEN: Record = Record::new();

const GUARD_KEY: &str = "guard-KEY-5e4d3c2b";

/// The guard service's key.
#[derive(Secrets)]
pub struct GuardKey {
    /// The key.
    #[secret(label = "Guard key", description = "The key of the guard service.")]
    pub guard_key: Secret,
}

/// Notes who wrote and what the state held, then keeps the message in the state.
#[define_hook(event = "message_received", position = 5)]
fn remember_message(
    event: &MessageReceived,
    state: &State,
    subscriber: Subscriber,
    conversation: Conversation,
) -> PreModelOutcome {
    let before: Option<String> = state.get("last");
    SEEN.push(
        conversation.id(),
        format!("from {}, before {before:?}", subscriber.id()),
    );
    state
        .set("last", &event.message())
        .expect("a string serializes");
    PreModelOutcome::Observe
}

/// Reads, after the model, what the state holds.
#[define_hook(event = "response_generated")]
fn recall_message(state: &State, conversation: Conversation) {
    let last: Option<String> = state.get("last");
    SEEN.push(conversation.id(), format!("after the model {last:?}"));
}

/// Audits with its key, and notes whether it has it and model access. It awaits, so it
/// runs on the turn's task (and logs where the test captures).
#[define_hook(event = "response_sent")]
async fn report_sent(
    keys: GuardKey,
    audit: &Audit,
    model: Option<Model>,
    conversation: Conversation,
) {
    tokio::task::yield_now().await;
    audit.record("guard.checked", keys.guard_key.expose());
    SEEN.push(
        conversation.id(),
        format!(
            "key of {} bytes, model {}",
            keys.guard_key.expose().len(),
            model.is_some()
        ),
    );
}

/// Blocks until the engine stops waiting for it, then says so.
#[define_hook(event = "message_received", timeout_ms = 100)]
fn wait_for_abort(abort: &Abort, conversation: Conversation) -> PreModelOutcome {
    let started = std::time::Instant::now();
    let seen = loop {
        if abort.is_aborted() {
            break "aborted";
        }
        if started.elapsed() > Duration::from_secs(30) {
            break "never aborted";
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    SEEN.push(conversation.id(), seen);
    PreModelOutcome::Observe
}

/// An engine with the hooks named, configured by `config` (TOML).
fn engine(names: &[&str], config: &str) -> Engine {
    let hooks = names.iter().map(|name| {
        plugin_sdk::engine::linked_hooks()
            .find(|hook| hook.name == *name)
            .unwrap_or_else(|| panic!("no hook `{name}` is linked"))
    });
    Engine::builder()
        .config(EngineConfig::parse(config).expect("the configuration parses"))
        .limits(Limits::default())
        .hooks(hooks)
        .build()
        .expect("the hooks pass validation")
}

fn turn(engine: &Engine, agent: &str, conversation: &str) -> engine_core::Turn {
    engine
        .turn(agent)
        .unwrap()
        .in_conversation("subscriber-7", conversation)
}

#[tokio::test]
async fn hooks_read_the_turn_and_their_state_writes_are_kept_with_it() {
    let engine = engine(&["remember_message", "recall_message"], "[agents.a]\n");
    let conversation = "hooks-keep-state";
    let turn = turn(&engine, "a", conversation);
    run_turn(&engine, &turn, "hello", true, &["hi"]).await;
    run_turn(&engine, &turn, "again", false, &["hi"]).await;
    assert_eq!(
        SEEN.of(conversation),
        [
            "from subscriber-7, before None",
            "after the model Some(\"hello\")",
            "from subscriber-7, before Some(\"hello\")",
            "after the model Some(\"again\")",
        ]
    );
}

#[tokio::test]
async fn a_halt_that_leaves_no_trace_drops_what_the_hooks_before_it_wrote() {
    let engine = engine(&["remember_message", "halt_on_stop"], "[agents.a]\n");
    let conversation = "hooks-no-trace";
    let turn = turn(&engine, "a", conversation);
    run_turn(&engine, &turn, "first", true, &["hi"]).await;
    let (halted, _) = run_turn(&engine, &turn, "stop", false, &["hi"]).await;
    assert!(!halted.persist);
    run_turn(&engine, &turn, "third", false, &["hi"]).await;
    assert_eq!(
        SEEN.of(conversation),
        [
            "from subscriber-7, before None",
            "from subscriber-7, before Some(\"first\")",
            // "stop" was written before the halt, and dropped with the turn.
            "from subscriber-7, before Some(\"first\")",
        ]
    );
}

#[tokio::test]
async fn a_hook_gets_its_declared_secrets_redacted_and_model_access_where_granted() {
    let captured = Captured::default();
    let _logging = captured.start();
    let config = format!(
        "[gateway]\nbase_url = \"http://127.0.0.1:9\"\n\
         tiers.fast = {{ model = \"tiny\", usd_per_million_input = 1.0, usd_per_million_output = 1.0, max_output_tokens = 100 }}\n\
         [agents.granted]\nmodel = {{ spend_cap_usd = 0.01 }}\nsecrets = {{ guard_key = {GUARD_KEY:?} }}\n\
         [agents.plain]\nsecrets = {{ guard_key = {GUARD_KEY:?} }}\n"
    );
    let engine = engine(&["report_sent"], &config);
    for (agent, conversation) in [("granted", "hooks-granted"), ("plain", "hooks-plain")] {
        let turn = turn(&engine, agent, conversation);
        engine.response_sent(&turn, "hello", "hi").await;
    }
    assert_eq!(
        SEEN.of("hooks-granted"),
        [format!("key of {} bytes, model true", GUARD_KEY.len())]
    );
    assert_eq!(
        SEEN.of("hooks-plain"),
        [format!("key of {} bytes, model false", GUARD_KEY.len())]
    );
    let log = captured.text();
    assert!(
        log.contains("source=\"turns:report_sent\"") && log.contains("[REDACTED]"),
        "{log}"
    );
    assert!(!log.contains(GUARD_KEY), "{log}");
}

#[tokio::test]
async fn a_blocking_hook_sees_its_abort_signal_at_its_timeout() {
    let engine = engine(&["wait_for_abort"], "[agents.a]\n");
    let conversation = "hooks-abort";
    let turn = turn(&engine, "a", conversation);
    let (outcome, asked) = run_turn(&engine, &turn, "hello", true, &["hi"]).await;
    assert_eq!(
        outcome.reply, "hi",
        "the turn went on past the hook's timeout"
    );
    assert_eq!(asked.len(), 1);
    for _ in 0..3000 {
        if !SEEN.of(conversation).is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(SEEN.of(conversation), ["aborted"]);
}
