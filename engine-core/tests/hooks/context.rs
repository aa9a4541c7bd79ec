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

/// Hands a task the abort signal, then hangs past its timeout: only the engine firing
/// the signal wakes the task (its future does not read the clock).
#[define_hook(event = "message_received", timeout_ms = 100)]
async fn hand_off_and_hang(abort: &Abort, conversation: Conversation) {
    let aborted = abort.aborted();
    tokio::spawn(async move {
        aborted.await;
        SEEN.push(conversation.id(), "woken");
    });
    std::future::pending::<()>().await;
}

/// Notes the conversation it guards; failing, it halts the turn.
#[define_hook(event = "message_received", fail_closed = "halted")]
fn conversation_guard(conversation: Conversation) {
    SEEN.push(conversation.id(), "guarded");
}

/// Plants a greeting in the state of a new conversation.
#[define_hook(event = "conversation_start")]
fn plant_greeting(state: &State) {
    state
        .set("greeting", &"planted")
        .expect("a string serializes");
}

/// Notes the greeting the state holds.
#[define_hook(event = "message_received")]
fn read_greeting(state: &State, conversation: Conversation) {
    let greeting: Option<String> = state.get("greeting");
    SEEN.push(conversation.id(), format!("greeting {greeting:?}"));
}

/// Counts the replies it saw in the state, and notes the count.
#[define_hook(event = "response_generated")]
fn count_replies(state: &State, conversation: Conversation) {
    let count = state.get::<u32>("replies").unwrap_or(0) + 1;
    state.set("replies", &count).expect("a number serializes");
    SEEN.push(conversation.id(), format!("count {count}"));
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
        .backends(engine::default_backends())
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

#[tokio::test]
async fn a_hook_that_reads_the_conversation_does_not_run_in_a_turn_without_one() {
    let engine = engine(&["conversation_guard"], "[agents.a]\n");
    // Run, it would fail for want of a conversation, and fail closed: the turn would halt.
    let outside = engine.turn("a").unwrap();
    let (outcome, asked) = run_turn(&engine, &outside, "hello", true, &["hi"]).await;
    assert_eq!(
        outcome.reply, "hi",
        "the turn was not halted: the hook did not run"
    );
    assert_eq!(asked.len(), 1);
    // In a conversation it runs.
    let inside = turn(&engine, "a", "hooks-guarded");
    run_turn(&engine, &inside, "hello", true, &["hi"]).await;
    assert_eq!(SEEN.of("hooks-guarded"), ["guarded"]);
}

#[tokio::test]
async fn an_agent_without_a_hooks_secret_leaves_the_hook_out_and_a_list_naming_it_is_refused() {
    let engine = engine(&["report_sent"], "[agents.keyless]\n");
    let agent = engine.agent("keyless").unwrap();
    assert!(agent
        .hooks(plugin_sdk::hook::Event::ResponseSent)
        .is_empty());
    let left: Vec<(&str, &[String])> = agent
        .hooks_left_out()
        .iter()
        .map(|left| (left.tool.as_str(), left.reasons.as_slice()))
        .collect();
    assert_eq!(
        left,
        [(
            "turns:report_sent",
            &["the secret `guard_key` is not configured".to_owned()][..]
        )]
    );
    let turn = turn(&engine, "keyless", "hooks-keyless");
    engine.response_sent(&turn, "hello", "hi").await;
    assert!(SEEN.of("hooks-keyless").is_empty(), "the hook never ran");

    let config = "[agents.a]\nhooks = [\"turns:report_sent\"]\n";
    let hooks = plugin_sdk::engine::linked_hooks().filter(|hook| hook.name == "report_sent");
    let error = Engine::builder()
        .backends(engine::default_backends())
        .config(EngineConfig::parse(config).unwrap())
        .hooks(hooks)
        .build()
        .err()
        .expect("refused");
    assert!(
        error.to_string().contains(
            "`agents.a.hooks.0` runs `turns:report_sent`, which the agent cannot run: the secret `guard_key` is not configured"
        ),
        "{error}"
    );
}

#[tokio::test]
async fn a_task_a_hook_handed_its_signal_to_is_woken_when_the_engine_stops_waiting() {
    let engine = engine(&["hand_off_and_hang"], "[agents.a]\n");
    let conversation = "hooks-hand-off";
    let turn = turn(&engine, "a", conversation);
    let (outcome, _) = run_turn(&engine, &turn, "hello", true, &["hi"]).await;
    assert_eq!(
        outcome.reply, "hi",
        "the turn went on past the hook's timeout"
    );
    for _ in 0..3000 {
        if !SEEN.of(conversation).is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(SEEN.of(conversation), ["woken"]);
}

#[tokio::test]
async fn a_hook_reads_what_an_earlier_hook_of_the_turn_wrote() {
    let engine = engine(&["plant_greeting", "read_greeting"], "[agents.a]\n");
    let turn = turn(&engine, "a", "hooks-greeting");
    run_turn(&engine, &turn, "hello", true, &["hi"]).await;
    assert_eq!(SEEN.of("hooks-greeting"), ["greeting Some(\"planted\")"]);
}

#[tokio::test]
async fn what_hooks_wrote_about_a_regenerated_reply_goes_with_it() {
    let engine = engine(&["count_replies", "regenerate_dirty"], "[agents.a]\n");
    let turn = turn(&engine, "a", "hooks-regenerated");
    let (outcome, asked) = run_turn(&engine, &turn, "hello", true, &["dirty", "clean"]).await;
    assert_eq!((outcome.reply.as_str(), asked.len()), ("clean", 2));
    // The first reply's count was dropped with it: the sent reply counts 1, not 2.
    assert_eq!(SEEN.of("hooks-regenerated"), ["count 1", "count 1"]);
    run_turn(&engine, &turn, "again", false, &["fine"]).await;
    assert_eq!(
        SEEN.of("hooks-regenerated")[2],
        "count 2",
        "the sent reply's count was kept"
    );
}
