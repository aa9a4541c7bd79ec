//! Staged actions in the turn, in-process with a scripted provider and a paused clock:
//! what performs nothing (a cancelled turn, a provider's failure), what bounds a perform
//! (its timeout, but not the turn's cancellation), and where an action is never offered.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use engine_core::config::{AgentConfig, EngineConfig, TurnConfig};
use engine_core::conversation::{ToolCall, ToolStatus};
use engine_core::provider::{Provider, ProviderError, ProviderReply, ProviderRequest, Wire};
use engine_core::stores::{ActionState, Conversations};
use engine_core::{Call, CallErrorKind, Engine, Format, Stop, TurnControl, TurnEvent};
use plugin_sdk::engine::BoxFuture;
use plugin_sdk::prelude::*;

plugin_sdk::plugin! {
    namespace = "probe",
    engine = ">=0.1",
    api_version = 0,
}

#[derive(Deserialize, JsonSchema, ToolArgs)]
#[tool_args(action)]
struct Act {
    /// How long the perform takes, in milliseconds.
    ms: u64,
    /// A note of at most 10 characters.
    note: Note<10>,
}

/// Performs started, and performs that ran to the end.
static STARTED: AtomicUsize = AtomicUsize::new(0);
static FINISHED: AtomicUsize = AtomicUsize::new(0);

/// Do something after the reply.
#[define_action]
async fn act(args: Act, who: Subscriber) -> String {
    STARTED.fetch_add(1, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(args.ms)).await;
    FINISHED.fetch_add(1, Ordering::SeqCst);
    format!("{} for {}", args.note, who.id())
}

/// Perform attempts of `fail`.
static FAILED_ATTEMPTS: AtomicUsize = AtomicUsize::new(0);

/// Try something that always fails.
#[define_action]
async fn fail(args: Act) -> Result<String, ToolError> {
    FAILED_ATTEMPTS.fetch_add(1, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(args.ms)).await;
    Err(ToolError::new(format!("the CRM refused `{}`", args.note)))
}

/// An output shaped like the answer of a staged action.
#[derive(Serialize, JsonSchema)]
struct LooksStaged {
    staged: String,
    note: String,
}

/// Answers what looks like a staging, as any tool's output may.
#[define_tool]
async fn mimic() -> LooksStaged {
    tokio::task::yield_now().await;
    LooksStaged {
        staged: "probe:act".into(),
        note: "staged: it will be performed".into(),
    }
}

/// A reply guard that fails closed when the reply says `FAIL`.
#[define_hook(
    event = "response_generated",
    mutates_response,
    fail_closed = "The reply could not be checked."
)]
fn checker(event: &ResponseGenerated) -> Result<(), String> {
    if event.response().contains("FAIL") {
        return Err("the checker is down".into());
    }
    Ok(())
}

/// A provider that answers from a script, then waits forever.
#[derive(Default)]
struct Scripted {
    replies: Mutex<VecDeque<Result<ProviderReply, ProviderError>>>,
}

impl Provider for Scripted {
    fn wire(&self) -> Wire {
        Wire::Openai
    }

    fn respond<'a>(
        &'a self,
        _: ProviderRequest<'a>,
        _: &'a mut (dyn FnMut(&str) + Send),
    ) -> BoxFuture<'a, Result<ProviderReply, ProviderError>> {
        let reply = self.replies.lock().unwrap().pop_front();
        Box::pin(async move {
            match reply {
                Some(reply) => reply,
                None => std::future::pending().await,
            }
        })
    }
}

fn text(words: &str) -> ProviderReply {
    ProviderReply {
        text: words.to_owned(),
        ..ProviderReply::default()
    }
}

fn staging(arguments: &str) -> ProviderReply {
    stagings("act", &[arguments])
}

/// A reply calling the action `action` once per arguments, ids `c0`, `c1`, ...
fn stagings(action: &str, arguments: &[&str]) -> ProviderReply {
    ProviderReply {
        tool_calls: arguments
            .iter()
            .enumerate()
            .map(|(at, arguments)| ToolCall {
                id: format!("c{at}"),
                name: format!("probe__{action}"),
                arguments: (*arguments).into(),
                extra: Default::default(),
            })
            .collect(),
        ..ProviderReply::default()
    }
}

fn engine(replies: Vec<Result<ProviderReply, ProviderError>>, tool_timeout_ms: u64) -> Engine {
    engine_with(replies, |turn| turn.tool_timeout_ms = Some(tool_timeout_ms))
}

fn engine_with(
    replies: Vec<Result<ProviderReply, ProviderError>>,
    configure: impl FnOnce(&mut TurnConfig),
) -> Engine {
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
    let provider = Scripted {
        replies: Mutex::new(replies.into()),
    };
    Engine::builder()
        .config(config)
        .provider("scripted", Arc::new(provider))
        .conversations(Conversations::memory())
        .build()
        .expect("the engine starts")
}

async fn converse(engine: &Engine, control: &TurnControl) -> (Vec<TurnEvent>, Stop) {
    let turn = engine.turn("bot").unwrap().in_conversation("u-1", "c");
    let mut events = Vec::new();
    let summary = engine
        .converse(&turn, Some("go"), control, &mut |event| events.push(event))
        .await;
    (events, summary.stop)
}

fn dropped_reasons(events: &[TurnEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|event| match event {
            TurnEvent::ActionDropped { reason, .. } => Some(reason.clone()),
            _ => None,
        })
        .collect()
}

// The tests share the counters above: they run one at a time.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn reset() {
    for counter in [&STARTED, &FINISHED, &FAILED_ATTEMPTS] {
        counter.store(0, Ordering::SeqCst);
    }
}

#[tokio::test(start_paused = true)]
async fn a_turn_cancelled_after_staging_performs_nothing() {
    let _serial = SERIAL.lock().await;
    reset();
    // The second request never answers: the turn is cancelled while it waits.
    let engine = engine(vec![Ok(staging(r#"{"ms":1,"note":"hi"}"#))], 1000);
    let control = TurnControl::default();
    let cancel = control.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        cancel.cancel();
    });
    let (events, stop) = converse(&engine, &control).await;
    assert_eq!(stop, Stop::Cancelled);
    assert_eq!(
        dropped_reasons(&events),
        ["the turn was cancelled before the reply"]
    );
    assert_eq!(STARTED.load(Ordering::SeqCst), 0);
    assert!(engine.conversation_actions("c").await.unwrap().is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_provider_failure_after_staging_performs_nothing() {
    let _serial = SERIAL.lock().await;
    reset();
    let engine = engine(
        vec![
            Ok(staging(r#"{"ms":1,"note":"hi"}"#)),
            Err(ProviderError::Truncated("cut".into())),
        ],
        1000,
    );
    let (events, stop) = converse(&engine, &TurnControl::default()).await;
    assert!(matches!(stop, Stop::ProviderError { .. }), "{stop:?}");
    assert_eq!(
        dropped_reasons(&events),
        ["the provider failed before the reply"]
    );
    assert_eq!(STARTED.load(Ordering::SeqCst), 0);
    assert!(engine.conversation_actions("c").await.unwrap().is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_turn_past_its_deadline_after_staging_performs_nothing() {
    let _serial = SERIAL.lock().await;
    reset();
    // The second request never answers: the deadline ends the turn.
    let engine = engine_with(vec![Ok(staging(r#"{"ms":1,"note":"hi"}"#))], |turn| {
        turn.deadline_secs = 1
    });
    let (events, stop) = converse(&engine, &TurnControl::default()).await;
    assert_eq!(stop, Stop::Deadline);
    assert_eq!(
        dropped_reasons(&events),
        ["the turn's deadline passed before the reply"]
    );
    assert_eq!(STARTED.load(Ordering::SeqCst), 0);
}

#[tokio::test(start_paused = true)]
async fn a_reply_withheld_by_a_failed_closed_guard_performs_nothing() {
    let _serial = SERIAL.lock().await;
    reset();
    let engine = engine(
        vec![Ok(staging(r#"{"ms":1,"note":"hi"}"#)), Ok(text("FAIL"))],
        1000,
    );
    let (events, stop) = converse(&engine, &TurnControl::default()).await;
    assert!(matches!(stop, Stop::FailedClosed { .. }), "{stop:?}");
    assert_eq!(
        dropped_reasons(&events),
        ["the hook `probe:checker` failed closed and withheld the reply"]
    );
    assert_eq!(STARTED.load(Ordering::SeqCst), 0);
}

#[tokio::test(start_paused = true)]
async fn three_actions_per_turn_by_default_and_the_fourth_is_refused() {
    let _serial = SERIAL.lock().await;
    reset();
    let engine = engine_with(
        vec![
            Ok(stagings(
                "act",
                &[
                    r#"{"ms":1,"note":"a"}"#,
                    r#"{"ms":1,"note":"b"}"#,
                    r#"{"ms":1,"note":"c"}"#,
                    r#"{"ms":1,"note":"d"}"#,
                ],
            )),
            Ok(text("Three of four.")),
        ],
        |_| {},
    );
    let (events, stop) = converse(&engine, &TurnControl::default()).await;
    assert_eq!(stop, Stop::Answered);
    let refused: Vec<_> = events
        .iter()
        .filter_map(|event| match event {
            TurnEvent::ToolResult {
                id,
                status: ToolStatus::Error,
                error,
                ..
            } => Some((id.clone(), error.clone().unwrap_or_default())),
            _ => None,
        })
        .collect();
    assert_eq!(refused.len(), 1, "{events:#?}");
    assert_eq!(refused[0].0, "c3");
    assert!(
        refused[0].1.contains("already staged 3 action(s)"),
        "{refused:?}"
    );
    assert_eq!(FINISHED.load(Ordering::SeqCst), 3);
}

#[tokio::test(start_paused = true)]
async fn a_failed_perform_runs_once_and_is_recorded_failed() {
    let _serial = SERIAL.lock().await;
    reset();
    let engine = engine(
        vec![
            Ok(stagings("fail", &[r#"{"ms":1,"note":"x"}"#])),
            Ok(text("Trying.")),
        ],
        1000,
    );
    let (events, stop) = converse(&engine, &TurnControl::default()).await;
    assert_eq!(stop, Stop::Answered);
    let failed: Vec<_> = events
        .iter()
        .filter_map(|event| match event {
            TurnEvent::ActionFailed { outcome, error, .. } => Some((*outcome, error.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(failed.len(), 1, "{events:#?}");
    assert_eq!(failed[0].0, "failed");
    assert!(failed[0].1.contains("the CRM refused `x`"), "{failed:?}");
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(FAILED_ATTEMPTS.load(Ordering::SeqCst), 1, "never retried");
    let stored = engine.conversation_actions("c").await.unwrap();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].state, ActionState::Failed);
}

#[tokio::test(start_paused = true)]
async fn a_perform_past_its_timeout_is_unknown_and_not_retried() {
    let _serial = SERIAL.lock().await;
    reset();
    let engine = engine(
        vec![
            Ok(staging(r#"{"ms":5000,"note":"slow"}"#)),
            Ok(text("On it.")),
        ],
        100,
    );
    let (events, stop) = converse(&engine, &TurnControl::default()).await;
    assert_eq!(stop, Stop::Answered);
    let failed: Vec<_> = events
        .iter()
        .filter_map(|event| match event {
            TurnEvent::ActionFailed { outcome, .. } => Some(*outcome),
            _ => None,
        })
        .collect();
    assert_eq!(failed, ["unknown"]);
    // Stopped at its timeout: it never finishes, however long one waits.
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(
        (
            STARTED.load(Ordering::SeqCst),
            FINISHED.load(Ordering::SeqCst)
        ),
        (1, 0)
    );
    let stored = engine.conversation_actions("c").await.unwrap();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].state, ActionState::Unknown);
    assert_eq!(stored[0].subscriber, "u-1");
}

#[tokio::test(start_paused = true)]
async fn a_perform_under_way_finishes_when_the_turn_is_cancelled() {
    let _serial = SERIAL.lock().await;
    reset();
    let engine = engine(
        vec![Ok(staging(r#"{"ms":500,"note":"hi"}"#)), Ok(text("On it."))],
        1000,
    );
    let control = TurnControl::default();
    let cancel = control.cancel.clone();
    tokio::spawn(async move {
        // The reply is in and the perform has started; its outcome must be known.
        tokio::time::sleep(Duration::from_millis(100)).await;
        cancel.cancel();
    });
    let (events, stop) = converse(&engine, &control).await;
    assert_eq!(stop, Stop::Answered);
    assert!(
        events
            .iter()
            .any(|event| matches!(event, TurnEvent::ActionPerformed { .. })),
        "{events:#?}"
    );
    assert_eq!(FINISHED.load(Ordering::SeqCst), 1);
    let stored = engine.conversation_actions("c").await.unwrap();
    assert_eq!(stored[0].state, ActionState::Performed);
    assert_eq!(stored[0].detail.as_deref(), Some("\"hi for u-1\""));
}

#[tokio::test(start_paused = true)]
async fn invalid_arguments_stage_nothing_and_the_model_reads_why() {
    let _serial = SERIAL.lock().await;
    reset();
    let engine = engine(
        vec![
            Ok(staging(r#"{"ms":1,"note":"far more than ten characters"}"#)),
            Ok(text("Sorry.")),
        ],
        1000,
    );
    let (events, stop) = converse(&engine, &TurnControl::default()).await;
    assert_eq!(stop, Stop::Answered);
    let errors: Vec<_> = events
        .iter()
        .filter_map(|event| match event {
            TurnEvent::ToolResult {
                status: ToolStatus::Error,
                error,
                ..
            } => error.clone(),
            _ => None,
        })
        .collect();
    assert_eq!(errors.len(), 1, "{events:#?}");
    assert!(errors[0].contains("at most 10"), "{errors:?}");
    assert!(!events
        .iter()
        .any(|event| matches!(event, TurnEvent::ActionStaged { .. })));
    assert_eq!(STARTED.load(Ordering::SeqCst), 0);
}

/// Issue 31, to settle: an ordinary tool's output that reads like a staging is its
/// output, and the next turn leaves it so (only an action's answers are settled).
#[tokio::test(start_paused = true)]
async fn an_ordinary_tools_output_that_looks_staged_is_never_settled_as_an_action() {
    let _serial = SERIAL.lock().await;
    reset();
    let engine = engine(
        vec![
            Ok(stagings("mimic", &["{}"])),
            Ok(text("One.")),
            Ok(text("Two.")),
        ],
        1000,
    );
    for _ in 0..2 {
        let (_, stop) = converse(&engine, &TurnControl::default()).await;
        assert_eq!(stop, Stop::Answered);
    }
    let answers: Vec<(ToolStatus, String)> = engine
        .conversation("c")
        .await
        .unwrap()
        .into_iter()
        .filter_map(|message| match message {
            engine_core::conversation::Message::Tool {
                status, content, ..
            } => Some((status, content)),
            _ => None,
        })
        .collect();
    assert_eq!(
        answers,
        [(
            ToolStatus::Ok,
            r#"{"staged":"probe:act","note":"staged: it will be performed"}"#.to_owned()
        )]
    );
}

#[tokio::test(start_paused = true)]
async fn an_action_is_never_called_directly_nor_offered_over_mcp() {
    let _serial = SERIAL.lock().await;
    reset();
    let engine = engine(Vec::new(), 1000);
    let turn = engine.turn("bot").unwrap().in_conversation("u-1", "c");
    let error = engine
        .call(&turn, Call::new("probe:act", r#"{"ms":1,"note":"hi"}"#))
        .await
        .expect_err("an action is not called");
    assert_eq!(error.kind(), CallErrorKind::Failed);
    assert!(error.message().contains("staged action"), "{error}");
    assert_eq!(STARTED.load(Ordering::SeqCst), 0);
    let agent = engine.agent("bot").unwrap();
    let mcp = agent.catalog(Format::Mcp, "en-US");
    assert!(!String::from_utf8_lossy(&mcp).contains("probe__act"));
    let model = agent.catalog(Format::OpenAi, "en-US");
    assert!(String::from_utf8_lossy(&model).contains("probe__act"));
}

#[test]
fn a_mounted_channel_must_be_linked_and_run_an_agent_with_turns() {
    let mount = |agent: &str| {
        let mut config = EngineConfig::default();
        config
            .agents
            .insert("tools-only".into(), AgentConfig::default());
        config.channels.insert(
            "webhook".into(),
            engine_core::config::ChannelConfig {
                agent: agent.into(),
            },
        );
        Engine::builder()
            .config(config)
            .build()
            .err()
            .expect("the engine refuses")
            .to_string()
    };
    assert!(
        mount("nobody")
            .contains("`channels.webhook.agent` names `nobody`, which is not a configured agent"),
        "{}",
        mount("nobody")
    );
    assert!(
        mount("tools-only").contains("which runs no turns"),
        "{}",
        mount("tools-only")
    );
    let mut config = EngineConfig::default();
    config.agents.insert(
        "bot".into(),
        AgentConfig {
            turn: Some(TurnConfig::new("scripted")),
            ..AgentConfig::default()
        },
    );
    config.channels.insert(
        "webhook".into(),
        engine_core::config::ChannelConfig {
            agent: "bot".into(),
        },
    );
    let error = Engine::builder()
        .config(config)
        .provider("scripted", Arc::new(Scripted::default()))
        .build()
        .err()
        .expect("no linked channel is called `webhook`")
        .to_string();
    assert!(
        error.contains("`channels.webhook` mounts a channel no linked plugin defines"),
        "{error}"
    );
}
