//! The hook pipeline, rule by rule, with hooks registered by `#[define_hook]`. Each test
//! builds a registry from the hooks it names, so one test's hooks never run in another.

use std::convert::Infallible;
use std::future::ready;
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use engine_core::{
    Format, Limits, Linked, ModelInput, PreModel, Registry, Rule, TurnEnd, TurnOutcome,
};
use plugin_sdk::hook::{
    Event, HookEntry, HookHandler, HookInput, HookResult, ResponseGenerated, ResponseSent, Turn,
};
use plugin_sdk::prelude::*;
use plugin_sdk::{HookDescriptor, PluginManifest, SourceLocation};

plugin_sdk::plugin! { namespace = "turns", engine = ">=0.1" }

// ---- pre-model hooks ----------------------------------------------------------------

/// Tells the model that this is the first turn.
#[define_hook(event = "conversation_start", position = 10)]
fn first_turn_context() -> PreModelOutcome {
    PreModelOutcome::InjectContext("first turn".into())
}

/// Halts a conversation that opens with "halt at start".
#[define_hook(event = "conversation_start", position = 20)]
fn halt_at_start(event: &ConversationStart) -> PreModelOutcome {
    if event.message() == "halt at start" {
        PreModelOutcome::Halt {
            message: "halted at start".into(),
            persist: true,
        }
    } else {
        PreModelOutcome::Observe
    }
}

/// Injects A.
#[define_hook(event = "message_received", position = 20)]
fn inject_a() -> PreModelOutcome {
    PreModelOutcome::InjectContext("A".into())
}

/// Injects B.
#[define_hook(event = "message_received", position = 30)]
async fn inject_b(_event: &MessageReceived) -> PreModelOutcome {
    tokio::task::yield_now().await;
    PreModelOutcome::InjectContext("B".into())
}

/// Halts on "stop", leaving no trace.
#[define_hook(event = "message_received", position = 25)]
fn halt_on_stop(event: &MessageReceived) -> PreModelOutcome {
    if event.message() == "stop" {
        PreModelOutcome::Halt {
            message: "stopped".into(),
            persist: false,
        }
    } else {
        PreModelOutcome::Observe
    }
}

static AFTER_HALT_RUNS: AtomicUsize = AtomicUsize::new(0);

/// Counts its runs, to show that it does not run after a halt.
#[define_hook(event = "message_received", position = 40)]
fn count_after_halt() {
    AFTER_HALT_RUNS.fetch_add(1, Ordering::SeqCst);
}

/// Injects its name; same position as `tie_a`, and defined first.
#[define_hook(event = "message_received", position = 50)]
fn tie_b() -> PreModelOutcome {
    PreModelOutcome::InjectContext("tie_b".into())
}

/// Injects its name; same position as `tie_b`.
#[define_hook(event = "message_received", position = 50)]
fn tie_a() -> PreModelOutcome {
    PreModelOutcome::InjectContext("tie_a".into())
}

/// Panics in a plain function.
#[define_hook(event = "message_received", position = 1)]
fn panics_sync() -> PreModelOutcome {
    panic!("the sync hook fell over")
}

/// Panics after an await.
#[define_hook(event = "message_received", position = 2)]
async fn panics_async() -> PreModelOutcome {
    tokio::task::yield_now().await;
    panic!("the async hook fell over")
}

/// Fails with an error of its own.
#[define_hook(event = "message_received", position = 3)]
fn fails() -> Result<PreModelOutcome, String> {
    Err("the store is down".into())
}

/// Never finishes: waits on a timer far past its timeout.
#[define_hook(event = "message_received", position = 4, timeout_ms = 50)]
async fn hangs_async() -> PreModelOutcome {
    tokio::time::sleep(Duration::from_secs(3600)).await;
    PreModelOutcome::Halt {
        message: "too late".into(),
        persist: true,
    }
}

/// Opened by `blocks_sync`'s test once the turn has gone on without it.
static GATE: (Mutex<bool>, Condvar) = (Mutex::new(false), Condvar::new());

/// Blocks its thread until the test opens the gate.
#[define_hook(event = "message_received", position = 5, timeout_ms = 50)]
fn blocks_sync() -> PreModelOutcome {
    let (open, opened) = &GATE;
    let _open = opened
        .wait_while(open.lock().unwrap(), |open| !*open)
        .unwrap();
    PreModelOutcome::Halt {
        message: "too late".into(),
        persist: true,
    }
}

// ---- response hooks -----------------------------------------------------------------

/// Replaces a dirty reply.
#[define_hook(event = "response_generated", mutates_response, position = 10)]
fn replace_dirty(event: &ResponseGenerated) -> ResponseOutcome {
    if event.response().contains("dirty") {
        ResponseOutcome::ReplaceResponse {
            message: "replaced".into(),
        }
    } else {
        ResponseOutcome::Observe
    }
}

/// Regenerates a dirty reply.
#[define_hook(event = "response_generated", mutates_response, position = 20)]
async fn regenerate_dirty(event: &ResponseGenerated) -> ResponseOutcome {
    if event.response().contains("dirty") {
        ResponseOutcome::Regenerate {
            reason: Some("dirty".into()),
        }
    } else {
        ResponseOutcome::Observe
    }
}

static COUNTS_SEEN: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// Records each pass's regeneration count; only observes.
#[define_hook(event = "response_generated")]
fn record_counts(event: &ResponseGenerated) {
    COUNTS_SEEN.lock().unwrap().push(event.regeneration_count());
}

static SENT: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Records what was sent.
#[define_hook(event = "response_sent")]
async fn record_sent(event: &ResponseSent) {
    SENT.lock().unwrap().push(event.response().to_owned());
}

// ---- helpers ------------------------------------------------------------------------

/// A registry with exactly the hooks named, found among the linked ones.
fn registry(names: &[&str]) -> Registry {
    let hooks: Vec<_> = names
        .iter()
        .map(|name| {
            plugin_sdk::linked_hooks()
                .find(|hook| hook.name == *name)
                .unwrap_or_else(|| panic!("no hook `{name}` is linked"))
        })
        .collect();
    Registry::build(Linked {
        hooks,
        ..Linked::default()
    })
    .expect("the hooks pass validation")
}

fn turn() -> Turn {
    Turn::new("conversation-1").with_locale("en-US")
}

/// Runs a turn whose model answers with `replies` in order, the last one from then on;
/// answers the outcome and what the model was asked each time.
async fn run(
    registry: &Registry,
    message: &str,
    first: bool,
    replies: &[&str],
) -> (TurnOutcome, Vec<ModelInput>) {
    let mut asked = Vec::new();
    let outcome = registry
        .run_turn(&turn(), message, first, |input: ModelInput| {
            let reply = replies[asked.len().min(replies.len() - 1)].to_owned();
            asked.push(input);
            ready(Ok::<_, Infallible>(reply))
        })
        .await
        .unwrap();
    (outcome, asked)
}

/// Everything logged while `body` runs on this thread, as text.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn start(&self) -> tracing::subscriber::DefaultGuard {
        let writer = self.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish();
        tracing::subscriber::set_default(subscriber)
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

// ---- before the model ---------------------------------------------------------------

#[tokio::test]
async fn injections_accumulate_in_position_order_across_both_pre_model_events() {
    // Listed out of order: the registry orders them.
    let registry = registry(&["inject_b", "inject_a", "first_turn_context"]);
    let (outcome, asked) = run(&registry, "hello", true, &["hi"]).await;
    let expected = vec!["first turn".to_owned(), "A".into(), "B".into()];
    assert_eq!(outcome.injected, expected);
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].injected_context, expected);
    assert_eq!(outcome.reply, "hi");
    assert_eq!(outcome.end, TurnEnd::Generated);

    // conversation_start runs only on the conversation's first turn.
    let (later, _) = run(&registry, "hello again", false, &["hi"]).await;
    assert_eq!(later.injected, ["A", "B"]);
}

#[tokio::test]
async fn equal_positions_run_in_hook_id_order_whatever_the_link_order() {
    for names in [["tie_a", "tie_b"], ["tie_b", "tie_a"]] {
        let (outcome, _) = run(&registry(&names), "hello", false, &["hi"]).await;
        assert_eq!(outcome.injected, ["tie_a", "tie_b"]);
    }
    let registry = registry(&["tie_b", "tie_a"]);
    let order: Vec<&str> = registry
        .hooks()
        .of(Event::MessageReceived)
        .iter()
        .map(|hook| hook.id())
        .collect();
    assert_eq!(order, ["turns:tie_a", "turns:tie_b"]);
}

#[tokio::test]
async fn the_first_halt_ends_the_turn_before_the_model_and_later_hooks_do_not_run() {
    let registry = registry(&["inject_a", "halt_on_stop", "count_after_halt"]);
    let before = AFTER_HALT_RUNS.load(Ordering::SeqCst);
    let (outcome, asked) = run(&registry, "stop", false, &["never"]).await;
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
        }
    );
    assert_eq!(AFTER_HALT_RUNS.load(Ordering::SeqCst), before);

    // Without a halt, the later hook runs.
    run(&registry, "go on", false, &["ok"]).await;
    assert_eq!(AFTER_HALT_RUNS.load(Ordering::SeqCst), before + 1);
}

#[tokio::test]
async fn a_halt_at_conversation_start_skips_message_received_and_persists_by_choice() {
    let registry = registry(&["halt_at_start", "inject_a"]);
    let verdict = registry
        .hooks()
        .before_model(
            Some(Arc::new(ConversationStart::new(turn(), "halt at start"))),
            Arc::new(MessageReceived::new(turn(), "halt at start")),
        )
        .await;
    let PreModel::Halt(halt) = verdict else {
        panic!("no halt: {verdict:?}")
    };
    assert_eq!(halt.hook, "turns:halt_at_start");
    assert_eq!(halt.message, "halted at start");
    assert!(halt.persist);
}

// ---- failures -----------------------------------------------------------------------

#[tokio::test]
async fn a_hook_that_panics_or_fails_is_logged_and_treated_as_observe() {
    let captured = Captured::default();
    let _logging = captured.start();
    let registry = registry(&["panics_sync", "panics_async", "fails", "inject_a"]);
    let (outcome, _) = run(&registry, "hello", false, &["hi"]).await;
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
    let registry = registry(&["hangs_async", "inject_a"]);
    let started = tokio::time::Instant::now();
    let (outcome, _) = run(&registry, "hello", false, &["hi"]).await;
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
    let registry = registry(&["blocks_sync", "inject_a"]);
    let (outcome, _) = run(&registry, "hello", false, &["hi"]).await;
    // The hook is still blocked: the turn finished without it.
    assert!(!*GATE.0.lock().unwrap());
    assert_eq!(outcome.injected, ["A"]);
    assert_eq!(outcome.reply, "hi");
    let (open, opened) = &GATE;
    *open.lock().unwrap() = true;
    opened.notify_all();
}

// ---- after the model ----------------------------------------------------------------

#[tokio::test]
async fn regeneration_beats_a_replacement_in_the_same_pass() {
    let registry = registry(&["replace_dirty", "regenerate_dirty"]);
    let (outcome, asked) = run(&registry, "hello", false, &["dirty", "clean"]).await;
    assert_eq!(asked.len(), 2);
    assert_eq!(outcome.reply, "clean");
    assert_eq!(outcome.end, TurnEnd::Generated);
    assert_eq!(outcome.regenerations, 1);
}

#[tokio::test]
async fn at_the_cap_a_regeneration_is_refused_and_the_last_reply_is_kept() {
    let registry = registry(&["regenerate_dirty"]);
    let (outcome, asked) = run(
        &registry,
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
}

#[tokio::test]
async fn the_cap_is_configurable_and_at_the_cap_the_passes_replacement_is_sent() {
    let registry = registry(&["replace_dirty", "regenerate_dirty"]).with_limits(Limits {
        max_regenerations: 4,
        ..Limits::default()
    });
    let (outcome, asked) = run(&registry, "hello", false, &["dirty"]).await;
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
    let registry = registry(&["regenerate_dirty", "record_counts"]);
    COUNTS_SEEN.lock().unwrap().clear();
    run(&registry, "hello", false, &["dirty", "dirty", "fine"]).await;
    assert_eq!(*COUNTS_SEEN.lock().unwrap(), [0, 1, 2]);
}

#[tokio::test]
async fn a_mutating_hook_makes_the_turn_non_streamed() {
    let (_, asked) = run(&registry(&["record_counts"]), "hello", false, &["hi"]).await;
    assert!(asked[0].stream, "an observing hook keeps streaming");
    let (_, asked) = run(&registry(&["replace_dirty"]), "hello", false, &["hi"]).await;
    assert!(!asked[0].stream, "a mutating hook turns streaming off");
}

#[tokio::test]
async fn response_sent_hooks_observe_the_reply_as_sent() {
    let registry = registry(&["record_sent"]);
    registry
        .hooks()
        .response_sent(Arc::new(ResponseSent::new(turn(), "hello", "sent text")))
        .await;
    assert!(SENT.lock().unwrap().contains(&"sent text".to_owned()));
}

#[tokio::test]
async fn the_guard_regenerates_a_dirty_reply_twice_then_replaces_it() {
    let registry = registry(&["dirty_output_guard"]);
    let (outcome, asked) = run(&registry, "hello", false, &["bad \u{FFFD}"]).await;
    assert_eq!(asked.len(), 3);
    assert!(!asked[0].stream);
    assert_eq!(outcome.reply, guard::APOLOGY);
    assert_eq!(
        outcome.end,
        TurnEnd::Replaced {
            hook: "guard:dirty_output_guard".into()
        }
    );

    let (outcome, asked) = run(&registry, "hello", false, &["bad \u{FFFD}", "Hello!"]).await;
    assert_eq!(asked.len(), 2);
    assert_eq!(outcome.reply, "Hello!");
    assert_eq!(outcome.end, TurnEnd::Generated);
}

// ---- descriptors written by hand ----------------------------------------------------

static HAND_MADE: PluginManifest = PluginManifest {
    namespace: "hand-made",
    package: "hand-made",
    version: "0.1.0",
    engine: ">=0.1",
    display_name: None,
    description: None,
};

fn hand_made_plugin() -> &'static PluginManifest {
    &HAND_MADE
}

fn replaces_everything(_: HookInput<'_, ResponseGenerated>) -> HookResult<ResponseGenerated> {
    Ok(ResponseOutcome::ReplaceResponse {
        message: "hijacked".into(),
    })
}

const fn hand_made(
    name: &'static str,
    mutates_response: bool,
    timeout: Duration,
) -> HookDescriptor {
    HookDescriptor {
        name,
        description: "Written by hand.",
        summary: None,
        position: 0,
        timeout,
        mutates_response,
        plugin: hand_made_plugin,
        handler: HookHandler::ResponseGenerated(HookEntry::Ready(replaces_everything)),
        location: SourceLocation {
            file: "hand_made.rs",
            line: 1,
        },
    }
}

static UNDECLARED_MUTATION: HookDescriptor = hand_made("undeclared", false, Duration::from_secs(1));

#[tokio::test]
async fn a_mutation_from_a_hook_not_declared_mutating_is_ignored() {
    let registry = Registry::build(Linked {
        hooks: vec![&UNDECLARED_MUTATION],
        ..Linked::default()
    })
    .unwrap();
    let (outcome, asked) = run(&registry, "hello", false, &["original"]).await;
    assert!(asked[0].stream);
    assert_eq!(outcome.reply, "original");
}

static ZERO_TIMEOUT: HookDescriptor = hand_made("zero", true, Duration::ZERO);
static TWIN: HookDescriptor = hand_made("zero", true, Duration::from_secs(1));

fn mutating_pre_model(_: HookInput<'_, MessageReceived>) -> HookResult<MessageReceived> {
    Ok(PreModelOutcome::Observe)
}

static MUTATES_BEFORE_MODEL: HookDescriptor = HookDescriptor {
    handler: HookHandler::MessageReceived(HookEntry::Ready(mutating_pre_model)),
    ..hand_made("before", true, Duration::from_secs(1))
};

#[test]
fn start_up_refuses_duplicate_hook_ids_misplaced_mutation_and_a_zero_timeout() {
    let error = Registry::build(Linked {
        hooks: vec![&ZERO_TIMEOUT, &TWIN, &MUTATES_BEFORE_MODEL],
        ..Linked::default()
    })
    .err()
    .expect("the engine refuses to start");
    let found: Vec<(Rule, Option<&str>)> = error
        .problems()
        .iter()
        .map(|problem| (problem.rule, problem.hook.as_deref()))
        .collect();
    assert_eq!(
        found,
        [
            (Rule::HookMutation, Some("hand-made:before")),
            (Rule::DuplicateId, Some("hand-made:zero")),
            (Rule::HookTimeout, Some("hand-made:zero")),
        ]
    );
    let report = error.to_string();
    assert!(
        report.contains(
            "[hook-mutation] plugin hand-made 0.1.0, hook `hand-made:before` (hand_made.rs:1)"
        ),
        "{report}"
    );
}

// Linked so that the catalogs have tools in them, beside the hooks of `guard` and of this
// test (the namespaces `guard` and `turns` have hooks and no tools).
use acme_crm as _;
use guard as _;
use weather as _;

#[test]
fn hooks_never_appear_in_a_tool_catalog() {
    let registry = Registry::linked().unwrap();
    let hook_namespaces: Vec<&str> = registry
        .hooks()
        .all()
        .map(|hook| hook.plugin().namespace)
        .collect();
    assert!(hook_namespaces.contains(&"guard") && hook_namespaces.contains(&"turns"));
    for format in Format::ALL {
        let catalog = registry.catalog(format, "en-US");
        let catalog = String::from_utf8_lossy(&catalog);
        assert!(catalog.contains("weather__weather"), "{catalog}");
        for namespace in ["guard", "turns"] {
            assert!(
                !catalog.contains(&format!("{namespace}__"))
                    && !catalog.contains(&format!("{namespace}:")),
                "a `{namespace}` hook is in the {format} catalog"
            );
        }
    }
}

#[test]
fn a_body_without_await_runs_as_a_ready_entry_and_one_that_awaits_as_a_future() {
    let entry = |name: &str| {
        let hook = plugin_sdk::linked_hooks()
            .find(|hook| hook.name == name)
            .unwrap();
        match hook.handler {
            HookHandler::ResponseSent(HookEntry::Ready(_))
            | HookHandler::MessageReceived(HookEntry::Ready(_)) => "ready",
            HookHandler::ResponseSent(HookEntry::Async(_))
            | HookHandler::MessageReceived(HookEntry::Async(_)) => "async",
            _ => unreachable!("only message_received and response_sent hooks are asked for"),
        }
    };
    assert_eq!(
        entry("record_sent"),
        "ready",
        "an `async fn` without `.await`"
    );
    assert_eq!(entry("inject_a"), "ready", "a plain `fn`");
    assert_eq!(entry("inject_b"), "async", "an `async fn` with `.await`");
}
