//! The agent turn with a scripted provider: parallel calls under the agent's cap, an
//! exclusive tool alone, every call answered exactly once whatever ends the turn
//! (cancellation, the tool's timeout, a limit, a panic, a provider error).
//!
//! This test binary links only the tools defined here. Tokio's clock is paused: it moves
//! only when every task waits, so the tools' timings decide the order, not the machine.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use engine_core::config::{AgentConfig, EngineConfig, TurnConfig};
use engine_core::conversation::{Message, ToolCall, ToolStatus};
use engine_core::provider::{Provider, ProviderError, ProviderReply, ProviderRequest, Wire};
use engine_core::stores::Conversations;
use engine_core::{Engine, Limit, Stop, TurnControl, TurnEvent};
use plugin_sdk::engine::BoxFuture;
use plugin_sdk::prelude::*;

plugin_sdk::plugin! {
    namespace = "probe",
    engine = ">=0.1",
}

/// How long to take.
#[derive(Deserialize, JsonSchema, ToolArgs)]
struct Wait {
    ms: u64,
}

/// Calls running now, and the most seen at once.
static RUNNING: AtomicUsize = AtomicUsize::new(0);
static MOST_AT_ONCE: AtomicUsize = AtomicUsize::new(0);
/// The most calls running beside the exclusive tool, while it ran.
static BESIDE_EXCLUSIVE: AtomicUsize = AtomicUsize::new(0);
/// Hanging calls whose futures were dropped (cancelled or timed out).
static DROPPED: AtomicUsize = AtomicUsize::new(0);

struct Running;

impl Running {
    fn start() -> Self {
        let now = RUNNING.fetch_add(1, Ordering::SeqCst) + 1;
        MOST_AT_ONCE.fetch_max(now, Ordering::SeqCst);
        Self
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        RUNNING.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Waits, then answers how long it waited.
#[define_tool]
async fn slow(wait: Wait) -> u64 {
    let _running = Running::start();
    tokio::time::sleep(Duration::from_millis(wait.ms)).await;
    wait.ms
}

/// Runs alone.
#[define_tool(exclusive)]
async fn alone(wait: Wait) -> u64 {
    let _running = Running::start();
    let check = async {
        loop {
            BESIDE_EXCLUSIVE.fetch_max(RUNNING.load(Ordering::SeqCst) - 1, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    let _ = tokio::time::timeout(Duration::from_millis(wait.ms), check).await;
    wait.ms
}

struct CountsDrop;

impl Drop for CountsDrop {
    fn drop(&mut self) {
        DROPPED.fetch_add(1, Ordering::SeqCst);
    }
}

/// Never answers.
#[define_tool]
async fn hang() -> u64 {
    let _dropped = CountsDrop;
    std::future::pending::<()>().await;
    0
}

/// Panics.
#[define_tool]
async fn boom() -> u64 {
    tokio::task::yield_now().await;
    panic!("the tool broke")
}

/// A provider that answers from a script and keeps what it was asked.
#[derive(Default)]
struct Scripted {
    replies: Mutex<VecDeque<Result<ProviderReply, ProviderError>>>,
    asked: Mutex<Vec<(Vec<Message>, bool)>>,
}

impl Scripted {
    fn new(replies: impl IntoIterator<Item = Result<ProviderReply, ProviderError>>) -> Arc<Self> {
        Arc::new(Self {
            replies: Mutex::new(replies.into_iter().collect()),
            asked: Mutex::default(),
        })
    }

    fn asked(&self) -> Vec<(Vec<Message>, bool)> {
        self.asked.lock().unwrap().clone()
    }
}

impl Provider for Scripted {
    fn wire(&self) -> Wire {
        Wire::Openai
    }

    fn respond<'a>(
        &'a self,
        request: ProviderRequest<'a>,
        _text: &'a mut (dyn FnMut(&str) + Send),
    ) -> BoxFuture<'a, Result<ProviderReply, ProviderError>> {
        self.asked
            .lock()
            .unwrap()
            .push((request.history.to_vec(), request.allow_tools));
        let reply = self.replies.lock().unwrap().pop_front();
        Box::pin(async move { reply.unwrap_or_else(|| Ok(text("(no more script)"))) })
    }
}

fn text(words: &str) -> ProviderReply {
    ProviderReply {
        text: words.to_owned(),
        ..ProviderReply::default()
    }
}

/// A reply calling `calls`: (tool, arguments), ids `c0`, `c1`, ...
fn calling(calls: &[(&str, &str)]) -> ProviderReply {
    ProviderReply {
        tool_calls: calls
            .iter()
            .enumerate()
            .map(|(at, (tool, arguments))| ToolCall {
                id: format!("c{at}"),
                name: format!("probe__{tool}"),
                arguments: (*arguments).to_owned(),
                extra: Default::default(),
            })
            .collect(),
        ..ProviderReply::default()
    }
}

fn engine(provider: Arc<Scripted>, configure: impl FnOnce(&mut TurnConfig)) -> Engine {
    builder(provider, configure)
        .build()
        .expect("the engine starts")
}

/// The builder of [`engine`], for a test that gives it more.
fn builder(
    provider: Arc<Scripted>,
    configure: impl FnOnce(&mut TurnConfig),
) -> engine_core::EngineBuilder {
    let mut turn = TurnConfig::new("scripted");
    configure(&mut turn);
    let mut config = EngineConfig::default();
    config.agents.insert(
        "bot".into(),
        AgentConfig {
            turn: Some(turn),
            ..AgentConfig::default()
        },
    );
    Engine::builder()
        .config(config)
        .provider("scripted", provider)
        .conversations(Conversations::memory())
}

/// Runs a turn in conversation `c`; answers its events and its summary.
async fn converse(
    engine: &Engine,
    control: &TurnControl,
) -> (Vec<TurnEvent>, engine_core::TurnSummary) {
    let turn = engine.turn("bot").unwrap().in_conversation("u", "c");
    let mut events = Vec::new();
    let summary = engine
        .converse(&turn, Some("go"), control, &mut |event| events.push(event))
        .await;
    (events, summary)
}

/// The answers in the stored history: (call id, status), in history order.
async fn answers(engine: &Engine) -> Vec<(String, ToolStatus)> {
    engine
        .conversation("c")
        .await
        .unwrap()
        .into_iter()
        .filter_map(|message| match message {
            Message::Tool {
                call_id, status, ..
            } => Some((call_id, status)),
            _ => None,
        })
        .collect()
}

fn result_ids(events: &[TurnEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|event| match event {
            TurnEvent::ToolResult { id, .. } => Some(id.clone()),
            _ => None,
        })
        .collect()
}

// The tests share the counters above: they run one at a time.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn reset() {
    for counter in [&RUNNING, &MOST_AT_ONCE, &BESIDE_EXCLUSIVE, &DROPPED] {
        counter.store(0, Ordering::SeqCst);
    }
}

#[tokio::test(start_paused = true)]
async fn calls_run_at_once_up_to_the_agents_cap_and_are_answered_in_call_order() {
    let _serial = SERIAL.lock().await;
    reset();
    let provider = Scripted::new([
        Ok(calling(&[
            ("slow", r#"{"ms":200}"#),
            ("slow", r#"{"ms":20}"#),
            ("slow", r#"{"ms":60}"#),
            ("slow", r#"{"ms":10}"#),
        ])),
        Ok(text("done")),
    ]);
    let engine = engine(Arc::clone(&provider), |turn| turn.max_parallel_tools = 2);
    let (events, summary) = converse(&engine, &TurnControl::default()).await;
    assert_eq!(summary.stop, Stop::Answered);
    assert_eq!(
        MOST_AT_ONCE.load(Ordering::SeqCst),
        2,
        "the cap of 2 was reached, not passed"
    );
    // Events in completion order: the 200 ms call finishes last.
    assert_eq!(result_ids(&events).last().unwrap(), "c0");
    let order: Vec<String> = answers(&engine)
        .await
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    assert_eq!(
        order,
        ["c0", "c1", "c2", "c3"],
        "the history keeps call order"
    );
    let (second, _) = &provider.asked()[1];
    assert_eq!(
        second.len(),
        6,
        "user, assistant, four answers: {second:#?}"
    );
}

#[tokio::test(start_paused = true)]
async fn an_exclusive_tool_runs_alone() {
    let _serial = SERIAL.lock().await;
    reset();
    let provider = Scripted::new([
        Ok(calling(&[
            ("slow", r#"{"ms":80}"#),
            ("alone", r#"{"ms":80}"#),
            ("slow", r#"{"ms":80}"#),
        ])),
        Ok(text("done")),
    ]);
    let engine = engine(provider, |turn| turn.max_parallel_tools = 3);
    let (_, summary) = converse(&engine, &TurnControl::default()).await;
    assert_eq!(summary.stop, Stop::Answered);
    assert_eq!(
        BESIDE_EXCLUSIVE.load(Ordering::SeqCst),
        0,
        "nothing ran beside it"
    );
    let statuses: Vec<ToolStatus> = answers(&engine).await.into_iter().map(|(_, s)| s).collect();
    assert_eq!(statuses, [ToolStatus::Ok; 3]);
}

#[tokio::test(start_paused = true)]
async fn cancelling_stops_running_tools_and_answers_their_calls_as_cancelled() {
    let _serial = SERIAL.lock().await;
    reset();
    let provider = Scripted::new([Ok(calling(&[("hang", "{}"), ("hang", "{}")]))]);
    let engine = engine(Arc::clone(&provider), |_| {});
    let control = TurnControl::default();
    let cancel = control.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        cancel.cancel();
    });
    let (events, summary) = converse(&engine, &control).await;
    assert_eq!(summary.stop, Stop::Cancelled);
    assert_eq!(
        DROPPED.load(Ordering::SeqCst),
        2,
        "both running calls were stopped"
    );
    assert_eq!(
        answers(&engine).await,
        [
            ("c0".into(), ToolStatus::Cancelled),
            ("c1".into(), ToolStatus::Cancelled)
        ]
    );
    assert_eq!(result_ids(&events).len(), 2);
    assert_eq!(
        provider.asked().len(),
        1,
        "no request after the cancellation"
    );
}

#[tokio::test(start_paused = true)]
async fn stopping_after_the_step_lets_its_tools_finish() {
    let _serial = SERIAL.lock().await;
    reset();
    let provider = Scripted::new([Ok(calling(&[("slow", r#"{"ms":100}"#)]))]);
    let engine = engine(Arc::clone(&provider), |_| {});
    let control = TurnControl::default();
    let stop = control.stop_after_step.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(20)).await;
        stop.cancel(); // while the tool runs
    });
    let (_, summary) = converse(&engine, &control).await;
    assert_eq!(summary.stop, Stop::Cancelled);
    assert_eq!(answers(&engine).await, [("c0".into(), ToolStatus::Ok)]);
    assert_eq!(provider.asked().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_tool_past_its_timeout_is_answered_timed_out_and_the_turn_goes_on() {
    let _serial = SERIAL.lock().await;
    reset();
    let provider = Scripted::new([Ok(calling(&[("hang", "{}")])), Ok(text("sorry"))]);
    let engine = engine(Arc::clone(&provider), |turn| {
        turn.tool_timeout_ms = Some(50)
    });
    let (_, summary) = converse(&engine, &TurnControl::default()).await;
    assert_eq!(summary.stop, Stop::Answered);
    assert_eq!(summary.reply, "sorry");
    assert_eq!(
        answers(&engine).await,
        [("c0".into(), ToolStatus::TimedOut)]
    );
    assert_eq!(DROPPED.load(Ordering::SeqCst), 1);
}

#[tokio::test(start_paused = true)]
async fn calls_past_the_turns_limit_are_skipped_and_the_next_request_offers_no_tools() {
    let _serial = SERIAL.lock().await;
    reset();
    let provider = Scripted::new([
        Ok(calling(&[
            ("slow", r#"{"ms":1}"#),
            ("slow", r#"{"ms":2}"#),
            ("slow", r#"{"ms":3}"#),
        ])),
        Ok(text("with what I have")),
    ]);
    let engine = engine(Arc::clone(&provider), |turn| turn.max_tool_calls = 2);
    let (_, summary) = converse(&engine, &TurnControl::default()).await;
    assert_eq!(
        summary.stop,
        Stop::Limit {
            limit: Limit::ToolCalls
        }
    );
    assert_eq!(summary.reply, "with what I have");
    let statuses: Vec<ToolStatus> = answers(&engine).await.into_iter().map(|(_, s)| s).collect();
    assert_eq!(
        statuses,
        [ToolStatus::Ok, ToolStatus::Ok, ToolStatus::Skipped]
    );
    let asked = provider.asked();
    assert!(asked[0].1, "the first request offers tools");
    assert!(!asked[1].1, "the last one does not");
}

/// Issue 31, to settle: `max_identical_calls` counts a call with the same arguments
/// however they are spelled (spacing, key order, `1` or `1.0`), as stagings do; other
/// arguments, or text that is not JSON, are other calls.
#[tokio::test(start_paused = true)]
async fn an_identical_call_is_counted_whatever_the_spelling_of_its_arguments() {
    let _serial = SERIAL.lock().await;
    reset();
    let provider = Scripted::new([
        Ok(calling(&[
            ("slow", r#"{"ms":1}"#),
            ("slow", r#"{ "ms" : 1 }"#),
            ("slow", r#"{"ms":1.0}"#),
            ("slow", r#"{"ms":2}"#),
            ("slow", "not json"),
            ("slow", "not json either"),
            ("slow", "x"),
            ("slow", r#""x""#),
        ])),
        Ok(text("done")),
    ]);
    let engine = engine(provider, |turn| turn.max_identical_calls = 1);
    let (events, summary) = converse(&engine, &TurnControl::default()).await;
    assert_eq!(summary.stop, Stop::Answered);
    let refused: Vec<String> = events
        .iter()
        .filter_map(|event| match event {
            TurnEvent::ToolResult {
                id,
                error: Some(error),
                ..
            } if error.contains("already ran") => Some(id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(refused, ["c1", "c2"]);
}

#[tokio::test(start_paused = true)]
async fn a_model_that_calls_tools_on_its_last_request_gets_them_skipped() {
    let _serial = SERIAL.lock().await;
    reset();
    let mut ignoring = calling(&[("slow", r#"{"ms":1}"#)]);
    ignoring.text = "I would call a tool".into();
    let provider = Scripted::new([Ok(ignoring)]);
    let engine = engine(Arc::clone(&provider), |turn| turn.max_model_requests = 1);
    let (_, summary) = converse(&engine, &TurnControl::default()).await;
    assert_eq!(
        summary.stop,
        Stop::Limit {
            limit: Limit::ModelRequests
        }
    );
    assert_eq!(summary.reply, "I would call a tool");
    assert_eq!(answers(&engine).await, [("c0".into(), ToolStatus::Skipped)]);
    let history = engine.conversation("c").await.unwrap();
    assert_eq!(
        history.len(),
        3,
        "user, the assistant's call and words, the skipped answer: {history:#?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_panicking_tool_is_answered_with_an_error_and_the_turn_goes_on() {
    let _serial = SERIAL.lock().await;
    reset();
    let provider = Scripted::new([
        Ok(calling(&[("boom", "{}"), ("slow", r#"{"ms":1}"#)])),
        Ok(text("ok")),
    ]);
    let engine = engine(provider, |_| {});
    let (_, summary) = converse(&engine, &TurnControl::default()).await;
    assert_eq!(summary.stop, Stop::Answered);
    assert_eq!(
        answers(&engine).await,
        [
            ("c0".into(), ToolStatus::Error),
            ("c1".into(), ToolStatus::Ok)
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_provider_error_after_a_step_keeps_the_step() {
    let _serial = SERIAL.lock().await;
    reset();
    let provider = Scripted::new([
        Ok(calling(&[("slow", r#"{"ms":1}"#)])),
        Err(ProviderError::Truncated("cut".into())),
    ]);
    let engine = engine(provider, |_| {});
    let (events, summary) = converse(&engine, &TurnControl::default()).await;
    assert!(
        matches!(summary.stop, Stop::ProviderError { .. }),
        "{summary:?}"
    );
    assert!(events
        .iter()
        .any(|event| matches!(event, TurnEvent::Error { .. })));
    let history = engine.conversation("c").await.unwrap();
    assert_eq!(history.len(), 3, "user, the call, its answer: {history:#?}");
    assert!(matches!(history.last(), Some(Message::Tool { .. })));
}

#[tokio::test(start_paused = true)]
async fn duplicate_call_ids_from_a_provider_each_get_one_answer() {
    let _serial = SERIAL.lock().await;
    reset();
    let mut twice = calling(&[("slow", r#"{"ms":1}"#), ("slow", r#"{"ms":2}"#)]);
    twice.tool_calls[1].id = "c0".into();
    let provider = Scripted::new([Ok(twice), Ok(text("ok"))]);
    let engine = engine(Arc::clone(&provider), |_| {});
    let (_, summary) = converse(&engine, &TurnControl::default()).await;
    assert_eq!(summary.stop, Stop::Answered);
    let (second, _) = &provider.asked()[1];
    let answered = second
        .iter()
        .filter(|message| matches!(message, Message::Tool { .. }))
        .count();
    assert_eq!(answered, 2, "{second:#?}");
}

#[tokio::test(start_paused = true)]
async fn a_call_id_a_later_step_repeats_is_renamed_so_each_call_is_its_own_in_the_turn() {
    let _serial = SERIAL.lock().await;
    reset();
    // Some servers number each reply's calls from the start: both steps call `c0`.
    let provider = Scripted::new([
        Ok(calling(&[("slow", r#"{"ms":1}"#)])),
        Ok(calling(&[("slow", r#"{"ms":2}"#)])),
        Ok(text("ok")),
    ]);
    let engine = engine(Arc::clone(&provider), |_| {});
    let (_, summary) = converse(&engine, &TurnControl::default()).await;
    assert_eq!(summary.stop, Stop::Answered);
    let (last, _) = &provider.asked()[2];
    let calls: Vec<&str> = last
        .iter()
        .flat_map(|message| match message {
            Message::Assistant { tool_calls, .. } => {
                tool_calls.iter().map(|call| call.id.as_str()).collect()
            }
            _ => Vec::new(),
        })
        .collect();
    let answers: Vec<&str> = last
        .iter()
        .filter_map(|message| match message {
            Message::Tool { call_id, .. } => Some(call_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), 2, "{last:#?}");
    assert_eq!(calls[0], "c0", "the first keeps its id");
    assert_ne!(calls[1], "c0", "the repeat is renamed");
    assert_eq!(answers, calls, "each call answered under its own id");
}

#[tokio::test(start_paused = true)]
async fn a_conversation_is_continued_only_by_its_subscriber() {
    let _serial = SERIAL.lock().await;
    reset();
    let provider = Scripted::new([Ok(text("hello")), Ok(text("again"))]);
    let engine = engine(Arc::clone(&provider), |_| {});
    let (_, first) = converse(&engine, &TurnControl::default()).await;
    assert_eq!(first.stop, Stop::Answered);
    let stranger = engine
        .turn("bot")
        .unwrap()
        .in_conversation("someone-else", "c");
    let summary = engine
        .converse(
            &stranger,
            Some("show me"),
            &TurnControl::default(),
            &mut |_| {},
        )
        .await;
    assert!(
        matches!(&summary.stop, Stop::Failed { message } if message.contains("belongs to another")),
        "{summary:?}"
    );
    assert_eq!(
        provider.asked().len(),
        1,
        "the stranger's turn asked nothing"
    );
    assert_eq!(
        engine.conversation("c").await.unwrap().len(),
        2,
        "and added nothing"
    );
    assert_eq!(
        engine.conversation_turns("c").await.unwrap().len(),
        1,
        "and recorded no turn"
    );
    // The refused turn let the conversation go: its subscriber goes on at once.
    let (_, again) = converse(&engine, &TurnControl::default()).await;
    assert_eq!(again.stop, Stop::Answered, "{again:?}");
    assert_eq!(engine.conversation_turns("c").await.unwrap().len(), 2);
}

#[tokio::test(start_paused = true)]
async fn a_second_turn_of_a_conversation_under_way_is_refused_as_busy_without_beginning() {
    let _serial = SERIAL.lock().await;
    reset();
    let provider = Scripted::new([Ok(calling(&[("slow", r#"{"ms":200}"#)])), Ok(text("done"))]);
    let engine = Arc::new(engine(provider, |_| {}));
    let running = TurnControl::default();
    let first = tokio::spawn({
        let (engine, running) = (Arc::clone(&engine), running.clone());
        async move { converse(&engine, &running).await.1 }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(running.begun.is_cancelled(), "the first turn began");
    let refused = TurnControl::default();
    let (events, second) = converse(&engine, &refused).await;
    assert!(
        matches!(&second.stop, Stop::Busy { message } if message.contains("is under way: send this one again")),
        "{second:?}"
    );
    assert!(
        !refused.begun.is_cancelled(),
        "the refused turn never began"
    );
    assert!(
        matches!(&events[..], [TurnEvent::Done { .. }]),
        "a busy turn's one event is its done: {events:?}"
    );
    assert_eq!(first.await.unwrap().stop, Stop::Answered);
    let after = TurnControl::default();
    let (_, third) = converse(&engine, &after).await;
    assert!(
        !matches!(third.stop, Stop::Busy { .. }) && after.begun.is_cancelled(),
        "once the first ended, a turn may start: {third:?}"
    );
}

/// A provider that never answers: the turn waits on its stream.
struct Silent;

impl Provider for Silent {
    fn wire(&self) -> Wire {
        Wire::Anthropic
    }

    fn respond<'a>(
        &'a self,
        _: ProviderRequest<'a>,
        _: &'a mut (dyn FnMut(&str) + Send),
    ) -> BoxFuture<'a, Result<ProviderReply, ProviderError>> {
        Box::pin(std::future::pending())
    }
}

#[tokio::test(start_paused = true)]
async fn cancelling_while_the_model_streams_drops_the_request_and_keeps_the_message() {
    let _serial = SERIAL.lock().await;
    let mut config = EngineConfig::default();
    config.agents.insert(
        "bot".into(),
        AgentConfig {
            turn: Some(TurnConfig::new("silent")),
            ..AgentConfig::default()
        },
    );
    let engine = Engine::builder()
        .config(config)
        .provider("silent", Arc::new(Silent))
        .conversations(Conversations::memory())
        .build()
        .unwrap();
    let control = TurnControl::default();
    let cancel = control.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(5)).await;
        cancel.cancel();
    });
    let (_, summary) = converse(&engine, &control).await;
    assert_eq!(summary.stop, Stop::Cancelled);
    assert_eq!(
        summary.model_requests, 1,
        "the request cut short still counts"
    );
    assert_eq!(
        engine.conversation("c").await.unwrap(),
        [Message::user("go")]
    );
}

#[tokio::test(start_paused = true)]
async fn the_turns_deadline_ends_a_running_tool_as_timed_out() {
    let _serial = SERIAL.lock().await;
    reset();
    let provider = Scripted::new([Ok(calling(&[("hang", "{}")]))]);
    let engine = engine(Arc::clone(&provider), |turn| {
        turn.deadline_secs = 2;
        turn.tool_timeout_ms = Some(60_000);
    });
    let (_, summary) = converse(&engine, &TurnControl::default()).await;
    assert_eq!(summary.stop, Stop::Deadline);
    assert_eq!(
        answers(&engine).await,
        [("c0".into(), ToolStatus::TimedOut)]
    );
    assert_eq!(provider.asked().len(), 1, "no request past the deadline");
}

/// Runs of the external tool `late:echo`.
static LATE_RUNS: AtomicUsize = AtomicUsize::new(0);

struct CountsRuns;

impl engine_core::external::Runner for CountsRuns {
    fn run(
        &self,
        _arguments: &str,
        _conversation: Option<&str>,
    ) -> futures::future::BoxFuture<'static, Result<String, engine_core::external::RunError>> {
        LATE_RUNS.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Ok(r#"{"ran":true}"#.to_owned()) })
    }
}

/// A provider that, while its first request is out, waits for the test to install a
/// tool; it answers from a script and keeps the catalog of each request.
struct Racing {
    replies: Mutex<VecDeque<ProviderReply>>,
    catalogs: Mutex<Vec<String>>,
    first_asked: tokio::sync::Notify,
    installed: tokio::sync::Notify,
}

impl Provider for Racing {
    fn wire(&self) -> Wire {
        Wire::Openai
    }

    fn respond<'a>(
        &'a self,
        request: ProviderRequest<'a>,
        _text: &'a mut (dyn FnMut(&str) + Send),
    ) -> BoxFuture<'a, Result<ProviderReply, ProviderError>> {
        let asked = {
            let mut catalogs = self.catalogs.lock().unwrap();
            catalogs.push(request.tools.to_owned());
            catalogs.len()
        };
        let reply = self.replies.lock().unwrap().pop_front();
        Box::pin(async move {
            if asked == 1 {
                self.first_asked.notify_one();
                self.installed.notified().await;
            }
            Ok(reply.unwrap_or_else(|| text("(no more script)")))
        })
    }
}

/// Issue 31 #1: a tool installed while the model is asked (a manifest dropped into
/// `tools.d`) is not callable in that answer, whose catalog did not list it; the next
/// request offers it, and a call then runs.
#[tokio::test(start_paused = true)]
async fn a_tool_installed_while_the_model_is_asked_is_offered_from_the_next_request_on() {
    let _serial = SERIAL.lock().await;
    LATE_RUNS.store(0, Ordering::SeqCst);
    let late = |id: &str| ProviderReply {
        tool_calls: vec![ToolCall {
            id: id.to_owned(),
            name: "late__echo".into(),
            arguments: "{}".into(),
            extra: Default::default(),
        }],
        ..ProviderReply::default()
    };
    let provider = Arc::new(Racing {
        replies: Mutex::new([late("c0"), late("c1"), text("done")].into()),
        catalogs: Mutex::default(),
        first_asked: tokio::sync::Notify::new(),
        installed: tokio::sync::Notify::new(),
    });
    let mut config = EngineConfig::default();
    config.agents.insert(
        "bot".into(),
        AgentConfig {
            turn: Some(TurnConfig::new("racing")),
            ..AgentConfig::default()
        },
    );
    let engine = Engine::builder()
        .config(config)
        .provider("racing", Arc::clone(&provider) as Arc<dyn Provider>)
        .conversations(Conversations::memory())
        .build()
        .expect("the engine starts");
    let install = async {
        provider.first_asked.notified().await;
        let spec = engine_core::external::ExternalToolSpec {
            namespace: "late".into(),
            name: "echo".into(),
            description: "Says it ran.".into(),
            summary: None,
            category: None,
            input_schema: serde_json::json!({
                "type": "object", "properties": {}, "required": [], "additionalProperties": false
            }),
            knows_conversation: false,
        };
        let tool = engine_core::external::ExternalTool::new(
            spec,
            "tools.d/late.json".into(),
            Arc::new(CountsRuns),
        )
        .unwrap();
        let installed = engine.install_extensions(vec![engine_core::external::LoadedFile {
            path: "tools.d/late.json".into(),
            kind: engine_core::external::ExtensionKind::Command,
            tools: Ok(vec![tool]),
            degraded: None,
            runs: Vec::new(),
        }]);
        assert_eq!(installed.tools().len(), 1, "the tool is installed");
        provider.installed.notify_one();
    };
    let control = TurnControl::default();
    let ((events, summary), ()) = tokio::join!(converse(&engine, &control), install);
    assert_eq!(summary.stop, Stop::Answered);
    let catalogs = provider.catalogs.lock().unwrap().clone();
    assert_eq!(catalogs.len(), 3);
    assert!(!catalogs[0].contains("late__echo"), "{}", catalogs[0]);
    assert!(catalogs[1].contains("late__echo"), "{}", catalogs[1]);
    assert_eq!(
        LATE_RUNS.load(Ordering::SeqCst),
        1,
        "only the call made in answer to a catalog that listed it ran"
    );
    let errors: Vec<(String, Option<String>)> = events
        .iter()
        .filter_map(|event| match event {
            TurnEvent::ToolResult { id, error, .. } => Some((id.clone(), error.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        errors,
        [
            (
                "c0".to_owned(),
                Some("unknown_tool: there is no tool named `late__echo`; call one of the tools you were given, by its exact name".to_owned())
            ),
            ("c1".to_owned(), None),
        ]
    );
    assert_eq!(
        answers(&engine).await,
        [
            ("c0".into(), ToolStatus::Error),
            ("c1".into(), ToolStatus::Ok)
        ]
    );
}

/// A provider that charges $1 per output token, and whose every reply calls `slow` and
/// reports 3 output tokens: each request costs $3, its worst case with
/// `max_output_tokens = 3`.
struct Dear(Arc<Scripted>);

impl Provider for Dear {
    fn wire(&self) -> Wire {
        Wire::Openai
    }

    fn respond<'a>(
        &'a self,
        request: ProviderRequest<'a>,
        text: &'a mut (dyn FnMut(&str) + Send),
    ) -> BoxFuture<'a, Result<ProviderReply, ProviderError>> {
        self.0.respond(request, text)
    }

    fn cost_usd(&self, usage: engine_core::provider::Usage) -> f64 {
        usage.output_tokens as f64
    }
}

/// An engine on [`Dear`] whose turns may spend `spend_cap_usd`, each reply reporting
/// `reported` output tokens (`None`: no usage at all) and 5 input tokens when it reports
/// any (free here).
fn dear_engine(spend_cap_usd: f64, reported: Option<u64>) -> (Engine, Arc<Scripted>) {
    let reply = || {
        let mut reply = calling(&[("slow", r#"{"ms":1}"#)]);
        if let Some(output_tokens) = reported {
            reply.usage.input_tokens = 5;
            reply.usage.output_tokens = output_tokens;
        }
        Ok(reply)
    };
    let scripted = Scripted::new((0..8).map(|_| reply()));
    let mut turn = TurnConfig::new("dear");
    turn.max_output_tokens = 3;
    turn.spend_cap_usd = spend_cap_usd;
    let mut config = EngineConfig::default();
    config.agents.insert(
        "bot".into(),
        AgentConfig {
            turn: Some(turn),
            ..AgentConfig::default()
        },
    );
    let engine = Engine::builder()
        .config(config)
        .provider("dear", Arc::new(Dear(Arc::clone(&scripted))))
        .conversations(Conversations::memory())
        .build()
        .expect("the engine starts");
    (engine, scripted)
}

/// Issue 31 #8: the turn's own requests are under a dollar cap. Each reserves its worst
/// case before it is sent: with $10 and $3 a request, the third leaves no room for a
/// fourth, so it is the last (no tools), and the turn spends $9.
#[tokio::test(start_paused = true)]
async fn the_turns_own_requests_stop_at_its_spend_cap_the_last_offering_no_tools() {
    let _serial = SERIAL.lock().await;
    reset();
    let (engine, scripted) = dear_engine(10.0, Some(3));
    let (_, summary) = converse(&engine, &TurnControl::default()).await;
    assert_eq!(
        summary.stop,
        Stop::Limit {
            limit: Limit::Spend
        }
    );
    assert_eq!(summary.model_requests, 3);
    assert_eq!(summary.cost_usd, 9.0);
    let offered: Vec<bool> = scripted.asked().iter().map(|(_, tools)| *tools).collect();
    assert_eq!(offered, [true, true, false]);
}

/// A cap with no room for one request's worst case sends none.
#[tokio::test(start_paused = true)]
async fn a_spend_cap_without_room_for_one_request_sends_none() {
    let _serial = SERIAL.lock().await;
    reset();
    let (engine, scripted) = dear_engine(2.0, Some(3));
    let (events, summary) = converse(&engine, &TurnControl::default()).await;
    assert_eq!(
        summary.stop,
        Stop::Limit {
            limit: Limit::Spend
        }
    );
    assert_eq!(summary.model_requests, 0);
    assert!(scripted.asked().is_empty(), "a request was sent");
    assert!(
        events.iter().any(
            |event| matches!(event, TurnEvent::Error { message } if message.contains("spend cap"))
        ),
        "{events:#?}"
    );
}

/// A request settles to what its usage says it cost ($1 of its $3 worst case here: the
/// sixth, with $5 left, is the last), and what a reply's usage does not report (all of
/// it, or its output) is charged at its worst: it may have cost that.
#[tokio::test(start_paused = true)]
async fn a_request_settles_to_its_usage_and_one_without_usage_to_its_worst_case() {
    let _serial = SERIAL.lock().await;
    reset();
    let (engine, _) = dear_engine(10.0, Some(1));
    let (_, summary) = converse(&engine, &TurnControl::default()).await;
    assert_eq!((summary.model_requests, summary.cost_usd), (6, 6.0));
    let (engine, _) = dear_engine(10.0, None);
    let (_, summary) = converse(&engine, &TurnControl::default()).await;
    assert_eq!((summary.model_requests, summary.cost_usd), (3, 9.0));
    // Usage that names its input but not its output: the output is charged at its worst.
    let (engine, _) = dear_engine(10.0, Some(0));
    let (_, summary) = converse(&engine, &TurnControl::default()).await;
    assert_eq!((summary.model_requests, summary.cost_usd), (3, 9.0));
}

/// A provider's counts are its to choose: `u64::MAX` twice saturates, it does not panic
/// (nor wrap to a turn that used almost nothing).
#[tokio::test(start_paused = true)]
async fn huge_usage_counts_saturate() {
    let _serial = SERIAL.lock().await;
    reset();
    let huge = engine_core::provider::Usage {
        input_tokens: u64::MAX,
        output_tokens: u64::MAX,
    };
    let mut first = calling(&[("slow", r#"{"ms":1}"#)]);
    first.usage = huge;
    let mut last = text("done");
    last.usage = huge;
    let engine = engine(Scripted::new([Ok(first), Ok(last)]), |_| {});
    let (_, summary) = converse(&engine, &TurnControl::default()).await;
    assert_eq!(summary.stop, Stop::Answered);
    assert_eq!(summary.usage, huge);
}

/// What [`recall`] saw: where it ran, and the conversation's last messages.
#[derive(Serialize, JsonSchema)]
struct Recalled {
    instance: String,
    agent: String,
    channel: Option<(String, String)>,
    /// Each message as `role: text [tool status, ...]`.
    messages: Vec<String>,
    older: bool,
    /// The first message's text in capitals: what the call's own output redaction,
    /// which matches a secret as written, would not catch.
    first_shouted: String,
}

/// The history's messages, one line each.
fn lines(page: &plugin_sdk::history::HistoryPage) -> Vec<String> {
    page.messages
        .iter()
        .map(|message| {
            let calls: Vec<String> = message
                .tool_calls
                .iter()
                .map(|call| format!("{} {}", call.tool, call.status.as_deref().unwrap_or("-")))
                .collect();
            format!("{:?}: {} {calls:?}", message.role, message.text)
        })
        .collect()
}

/// Reads where it runs and the conversation's last four messages.
#[define_tool]
async fn recall(
    history: History,
    instance: Instance,
    agent: AgentName,
    channel: Option<TurnChannel>,
) -> Result<Recalled, ToolError> {
    let page = history
        .recent(RecentMessages::last(4))
        .await
        .map_err(|error| ToolError::new(error.to_string()))?;
    Ok(Recalled {
        instance: instance.slug().to_owned(),
        agent: agent.name().to_owned(),
        channel: channel
            .map(|channel| (channel.name().to_owned(), channel.conversation().to_owned())),
        messages: lines(&page),
        older: page.older.is_some(),
        first_shouted: page.messages[0].text.to_uppercase(),
    })
}

/// A key, which an agent that configures it lists among its secrets.
#[derive(Secrets)]
struct ProbeKey {
    /// The key.
    #[secret(label = "Probe key", description = "A key the probe holds.")]
    key: Secret,
}

/// Holds a key (so that an agent may configure one), and does nothing with it.
#[define_tool]
async fn keyed(key: ProbeKey) -> usize {
    key.key.expose().len()
}

/// What the `response_sent` hook read of each `recall-` conversation's history.
static HOOK_READ: Mutex<Vec<(String, Vec<String>)>> = Mutex::new(Vec::new());

/// Reads the last three stored messages of a `recall-` conversation once its turn is
/// sent (every other test's turns pass it by).
#[define_hook(event = "response_sent")]
async fn read_back(history: History, conversation: Conversation) {
    if !conversation.id().starts_with("recall-") {
        return;
    }
    let page = history.recent(RecentMessages::last(3)).await.unwrap();
    HOOK_READ
        .lock()
        .unwrap()
        .push((conversation.id().to_owned(), lines(&page)));
}

/// What `recall` answered in `conversation`, from its stored answer.
async fn recalled(engine: &Engine, conversation: &str) -> serde_json::Value {
    engine
        .conversation(conversation)
        .await
        .unwrap()
        .into_iter()
        .find_map(|message| match message {
            Message::Tool { name, content, .. } if name == "probe__recall" => {
                Some(serde_json::from_str(&content).unwrap())
            }
            _ => None,
        })
        .expect("recall answered")
}

#[tokio::test(start_paused = true)]
async fn a_tool_reads_its_own_conversations_history_as_the_model_saw_it_and_where_it_runs() {
    let _serial = SERIAL.lock().await;
    reset();
    HOOK_READ.lock().unwrap().clear();
    let provider = Scripted::new([
        // The first turn of `recall-a`: a call, then words.
        Ok(calling(&[("slow", r#"{"ms":1}"#)])),
        Ok(text("first answer")),
        // Its second turn: the model recalls.
        Ok(calling(&[("recall", "{}")])),
        Ok(text("recalled")),
        // Another conversation's only turn.
        Ok(calling(&[("recall", "{}")])),
        Ok(text("recalled too")),
    ]);
    let engine = engine(Arc::clone(&provider), |_| {});
    let turn_in = |conversation: &str| {
        engine
            .turn("bot")
            .unwrap()
            .in_conversation("u", conversation)
            .via("webhook", &format!("chat-{conversation}"))
    };
    let mut events = |_| {};
    let control = TurnControl::default();
    for (conversation, message) in [
        ("recall-a", "hello"),
        ("recall-a", "what did we say?"),
        ("recall-b", "something else"),
    ] {
        let summary = engine
            .converse(&turn_in(conversation), Some(message), &control, &mut events)
            .await;
        assert_eq!(summary.stop, Stop::Answered, "{summary:?}");
    }
    // In a step, the tool reads the conversation as the model saw it: the message the
    // turn answers, and its own call, not yet answered; the first message is older.
    let seen = recalled(&engine, "recall-a").await;
    assert_eq!(
        seen["messages"],
        serde_json::json!([
            r#"Assistant:  ["probe__slow ok"]"#,
            r#"Assistant: first answer []"#,
            r#"User: what did we say? []"#,
            r#"Assistant:  ["probe__recall -"]"#,
        ])
    );
    assert_eq!(seen["older"], true);
    assert_eq!(seen["instance"], "default");
    assert_eq!(seen["agent"], "bot");
    assert_eq!(
        seen["channel"],
        serde_json::json!(["webhook", "chat-recall-a"])
    );
    // Only its own conversation's.
    let other = recalled(&engine, "recall-b").await;
    assert_eq!(
        other["messages"],
        serde_json::json!([
            r#"User: something else []"#,
            r#"Assistant:  ["probe__recall -"]"#,
        ])
    );
    assert_eq!(
        other["channel"],
        serde_json::json!(["webhook", "chat-recall-b"])
    );
    // A hook reads the history as stored: after its turn, with the reply.
    let read = HOOK_READ.lock().unwrap().clone();
    assert_eq!(
        read.last().unwrap(),
        &(
            "recall-b".to_owned(),
            vec![
                r#"User: something else []"#.to_owned(),
                r#"Assistant:  ["probe__recall ok"]"#.to_owned(),
                r#"Assistant: recalled too []"#.to_owned(),
            ]
        )
    );
    assert_eq!(
        read.len(),
        3,
        "one read per turn of a `recall-` conversation"
    );
    // A call outside a turn reads the conversation as stored: its calls answered.
    let outside = engine
        .call(
            &turn_in("recall-b"),
            engine_core::Call::new("probe__recall", "{}"),
        )
        .await
        .unwrap();
    let outside: serde_json::Value = serde_json::from_str(&outside).unwrap();
    assert_eq!(
        outside["messages"],
        serde_json::json!([
            r#"User: something else []"#,
            r#"Assistant:  ["probe__recall ok"]"#,
            r#"Assistant: recalled too []"#,
        ])
    );
}

#[tokio::test(start_paused = true)]
async fn the_instance_is_the_configurations_and_a_turn_without_a_channel_has_none() {
    let _serial = SERIAL.lock().await;
    reset();
    let provider = Scripted::new([Ok(calling(&[("recall", "{}")])), Ok(text("ok"))]);
    let config = EngineConfig::parse(
        "instance = \"acme-prod\"\n[agents.bot.turn]\nprovider = \"scripted\"\n\
         [agents.bot.secrets]\nkey = \"sekret-4242\"\n",
    )
    .unwrap();
    config.check().unwrap();
    let engine = Engine::builder()
        .config(config)
        .provider("scripted", provider)
        .conversations(Conversations::memory())
        .build()
        .unwrap();
    let turn = engine.turn("bot").unwrap().in_conversation("u", "recall-c");
    let summary = engine
        .converse(
            &turn,
            Some("hi, my key is sekret-4242"),
            &TurnControl::default(),
            &mut |_| {},
        )
        .await;
    assert_eq!(summary.stop, Stop::Answered);
    let seen = recalled(&engine, "recall-c").await;
    assert_eq!(seen["instance"], "acme-prod");
    assert_eq!(seen["channel"], serde_json::Value::Null);
    // A configured secret the user wrote is redacted in the history itself, as in the
    // turn's events (not only in the tool's output).
    assert_eq!(seen["messages"][0], "User: hi, my key is [REDACTED] []");
    assert_eq!(seen["first_shouted"], "HI, MY KEY IS [REDACTED]");
}

/// Which artifact to take.
#[derive(Deserialize, JsonSchema, ToolArgs)]
struct TakeFile {
    /// The artifact's handle.
    handle: plugin_sdk::artifacts::ArtifactHandle,
}

/// Takes an artifact of the conversation and says what it is.
#[define_tool]
async fn take_file(file: TakeFile, artifacts: &Artifacts) -> Result<String, ToolError> {
    Ok(match artifacts.take(&file.handle).await? {
        Some(taken) => format!("{} {} {}", taken.filename, taken.mime, taken.bytes.len()),
        None => "gone".to_owned(),
    })
}

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

fn attached(filename: &str, media_type: &str, bytes: &[u8]) -> engine_core::Attachment {
    engine_core::Attachment {
        filename: filename.to_owned(),
        media_type: media_type.to_owned(),
        bytes: bytes.to_vec(),
    }
}

/// The handles named in `text`, in order.
fn handles_in(text: &str) -> Vec<String> {
    text.lines()
        .filter(|line| line.starts_with("- "))
        .filter_map(|line| line.split("artifact handle ").nth(1))
        .map(str::to_owned)
        .collect()
}

#[tokio::test(start_paused = true)]
async fn attachments_are_kept_as_artifacts_named_to_the_model_and_taken_by_handle() {
    let _serial = SERIAL.lock().await;
    let provider = Scripted::new([Ok(text("I see two files."))]);
    let engine = engine(Arc::clone(&provider), |_| {});
    let turn = engine.turn("bot").unwrap().in_conversation("u", "c");
    let files = vec![
        attached("chart.png", "image/png", PNG),
        attached("notes.txt", "text/plain", b"refunds in 14 days"),
    ];
    let turn = engine.attach(turn, files).expect("both are accepted");
    let summary = engine
        .converse(
            &turn,
            Some("what are these?"),
            &TurnControl::default(),
            &mut |_| {},
        )
        .await;
    assert_eq!(summary.stop, Stop::Answered);
    // The model read the message and a line for each file, with its handle.
    let asked = provider.asked();
    let Some(Message::User { content, .. }) = asked[0].0.last() else {
        panic!("the model was asked the user's message: {asked:?}");
    };
    assert!(
        content.starts_with("what are these?\n\n[Attached"),
        "{content}"
    );
    assert!(
        content.contains("\n- chart.png (image/png, 16 bytes): artifact handle "),
        "{content}"
    );
    assert!(
        content.contains("\n- notes.txt (text/plain, 18 bytes): artifact handle "),
        "{content}"
    );
    let handles = handles_in(content);
    assert_eq!(handles.len(), 2, "{content}");
    // Stored as the model read it: a later turn sees the handles too.
    let stored = engine.conversation("c").await.unwrap();
    assert!(matches!(&stored[0], Message::User { content: kept, .. } if kept == content));
    // A tool of the conversation takes a file by its handle, once.
    assert_eq!(
        take(&engine, "c", &handles[0]).await,
        "\"chart.png image/png 16\""
    );
    assert_eq!(take(&engine, "c", &handles[0]).await, "\"gone\"");
    // Another conversation's tool does not reach them, nor take them from this one.
    assert_eq!(take(&engine, "other", &handles[1]).await, "\"gone\"");
    assert_eq!(
        take(&engine, "c", &handles[1]).await,
        "\"notes.txt text/plain 18\""
    );
}

/// What `probe:take_file` answers for `handle` in `conversation`.
async fn take(engine: &Engine, conversation: &str, handle: &str) -> String {
    let arguments = serde_json::json!({ "handle": handle }).to_string();
    let turn = engine
        .turn("bot")
        .unwrap()
        .in_conversation("u", conversation);
    let call = engine_core::Call::new("probe__take_file", &arguments);
    engine.call_in_conversation(&turn, call).await.unwrap()
}

#[tokio::test(start_paused = true)]
async fn attachments_are_refused_whole_before_anything_is_kept() {
    let _serial = SERIAL.lock().await;
    let engine = engine(Scripted::new([]), |_| {});
    let turn = || engine.turn("bot").unwrap().in_conversation("u", "c");
    let refused = |files: Vec<engine_core::Attachment>| engine.attach(turn(), files).unwrap_err();
    let good = attached("a.txt", "text/plain", b"x");
    let empty = refused(vec![good.clone(), attached("b.txt", "text/plain", b"")]);
    assert_eq!(
        (empty.status(), empty.to_string()),
        (400, "the attachment `b.txt` is empty".to_owned())
    );
    let large = refused(vec![attached(
        "big.txt",
        "text/plain",
        &vec![b'x'; (2 << 20) + 1],
    )]);
    assert_eq!(large.status(), 413, "{large}");
    let mistyped = refused(vec![attached("chart.png", "image/png", b"not a picture")]);
    assert_eq!(mistyped.status(), 415, "{mistyped}");
    let unaccepted = refused(vec![attached("run.exe", "application/x-msdownload", b"MZ")]);
    assert_eq!(unaccepted.status(), 415, "{unaccepted}");
    let many = refused(vec![good.clone(); 5]);
    assert_eq!(many.status(), 413, "{many}");
    let traversal = refused(vec![attached("../../etc/passwd", "text/plain", b"x")]);
    assert_eq!(traversal.status(), 400, "{traversal}");
    let outside = engine
        .attach(engine.turn("bot").unwrap(), vec![good])
        .unwrap_err();
    assert_eq!(outside, engine_core::AttachmentError::WithoutConversation);
    assert!(
        engine.conversation("c").await.unwrap().is_empty(),
        "nothing kept"
    );
}

#[tokio::test(start_paused = true)]
async fn attachments_the_store_cannot_hold_are_taken_back_and_the_turn_keeps_nothing() {
    use engine_core::config::ArtifactLimits;
    use engine_core::stores::MemoryArtifacts;
    let _serial = SERIAL.lock().await;
    let first = attached("a.txt", "text/plain", &[b'a'; 1000]);
    // Room for the first file and not the second.
    let limits = ArtifactLimits {
        capacity_bytes: engine_core::stores::artifacts::footprint("c", &to_artifact(&first)) + 500,
        ..ArtifactLimits::default()
    };
    let store = Arc::new(MemoryArtifacts::new(limits));
    let provider = Scripted::new([Ok(text("never asked"))]);
    let engine = builder(Arc::clone(&provider), |_| {})
        .artifact_store(Arc::clone(&store) as _)
        .build()
        .unwrap();
    let turn = engine.turn("bot").unwrap().in_conversation("u", "c");
    let second = attached("b.txt", "text/plain", &[b'b'; 1000]);
    let turn = engine.attach(turn, vec![first, second]).unwrap();
    let summary = engine
        .converse(
            &turn,
            Some("keep these"),
            &TurnControl::default(),
            &mut |_| {},
        )
        .await;
    assert!(
        matches!(&summary.stop, Stop::Failed { message } if message.contains("the attachment `b.txt` could not be kept")),
        "{summary:?}"
    );
    assert_eq!(store.held_bytes(), 0, "the first file was taken back");
    assert!(provider.asked().is_empty(), "the model was not asked");
    assert!(
        engine.conversation("c").await.unwrap().is_empty(),
        "nothing kept"
    );
}

fn to_artifact(attachment: &engine_core::Attachment) -> plugin_sdk::artifacts::Artifact {
    plugin_sdk::artifacts::Artifact {
        bytes: attachment.bytes.clone(),
        filename: attachment.filename.clone(),
        mime: attachment.media_type.clone(),
    }
}

#[tokio::test(start_paused = true)]
async fn a_busy_conversation_keeps_none_of_a_refused_turns_attachments() {
    use engine_core::stores::MemoryArtifacts;
    let _serial = SERIAL.lock().await;
    reset();
    let store = Arc::new(MemoryArtifacts::new(Default::default()));
    let provider = Scripted::new([Ok(calling(&[("slow", r#"{"ms":200}"#)])), Ok(text("done"))]);
    let engine = Arc::new(
        builder(provider, |_| {})
            .artifact_store(Arc::clone(&store) as _)
            .build()
            .unwrap(),
    );
    let running = TurnControl::default();
    let first = tokio::spawn({
        let (engine, running) = (Arc::clone(&engine), running.clone());
        async move { converse(&engine, &running).await.1 }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(running.begun.is_cancelled(), "the first turn began");
    let turn = engine.turn("bot").unwrap().in_conversation("u", "c");
    let turn = engine
        .attach(turn, vec![attached("a.txt", "text/plain", b"x")])
        .unwrap();
    let second = engine
        .converse(
            &turn,
            Some("and this"),
            &TurnControl::default(),
            &mut |_| {},
        )
        .await;
    assert!(matches!(second.stop, Stop::Busy { .. }), "{second:?}");
    assert_eq!(store.held_bytes(), 0, "the refused turn kept no file");
    assert_eq!(first.await.unwrap().stop, Stop::Answered);
}
