//! Dev sessions in the kernel (issue 35), over a link of this test's own instead of a
//! WebSocket: which tools an agent equips from a session and which it refuses, a
//! session's tool replacing a linked one for its agent only, what a call's frame carries,
//! the state kept, the caps, and the deadline. The transport is tested with real
//! processes in the example engine's `dev_mode` tests.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use engine_core::config::EngineConfig;
use engine_core::conversation::ToolCall;
use engine_core::dev::{
    DevLink, DevServe, Disconnected, MAX_CALLS_PER_SESSION, MAX_SESSIONS_PER_AGENT,
};
use engine_core::provider::{Provider, ProviderError, ProviderReply, ProviderRequest, Wire};
use engine_core::stores::Conversations;
use engine_core::{Call, CallErrorKind, Engine, Format, Instant, TurnControl, TurnEvent};
use plugin_dev_wire::{
    Binding, CallFrame, HookDecl, HookOutcome, NeedsDecl, Outcome, SecretDecl, ToolDecl,
};
use plugin_sdk::engine::BoxFuture;
use serde_json::{json, Value};

// The linked plugins these tests read: `weather:weather`, and acme's secret.
use acme_crm as _;
use weather as _;

/// A link that records each call's frame and answers as `answer` says; `None` leaves the
/// call waiting until it is dropped, which it counts.
struct Link {
    frames: Mutex<Vec<CallFrame>>,
    answer: fn(&CallFrame) -> Option<Outcome>,
    dropped: Arc<AtomicUsize>,
}

impl Link {
    fn new(answer: fn(&CallFrame) -> Option<Outcome>) -> Arc<Self> {
        Arc::new(Self {
            frames: Mutex::default(),
            answer,
            dropped: Arc::default(),
        })
    }

    fn frames(&self) -> Vec<Value> {
        self.frames
            .lock()
            .unwrap()
            .iter()
            .map(|frame| serde_json::to_value(frame).unwrap())
            .collect()
    }
}

struct CountsDrop(Arc<AtomicUsize>);

impl Drop for CountsDrop {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

impl DevLink for Link {
    fn call(
        &self,
        frame: CallFrame,
        _serve: DevServe,
    ) -> BoxFuture<'static, Result<Outcome, Disconnected>> {
        let answer = (self.answer)(&frame);
        self.frames.lock().unwrap().push(frame);
        match answer {
            Some(outcome) => Box::pin(std::future::ready(Ok(outcome))),
            None => {
                let guard = CountsDrop(Arc::clone(&self.dropped));
                Box::pin(async move {
                    let _guard = guard;
                    std::future::pending().await
                })
            }
        }
    }
}

fn ok(output: &str) -> Outcome {
    Outcome::Ok {
        output: output.to_owned(),
        state_writes: Default::default(),
    }
}

fn dev_answer(_: &CallFrame) -> Option<Outcome> {
    Some(ok(r#"{"from":"dev"}"#))
}

fn never(_: &CallFrame) -> Option<Outcome> {
    None
}

const STRICT_EMPTY: &str =
    r#"{"type":"object","properties":{},"required":[],"additionalProperties":false}"#;

fn decl(namespace: &str, name: &str) -> ToolDecl {
    ToolDecl {
        namespace: namespace.to_owned(),
        name: name.to_owned(),
        description: format!("{name}, the version on the developer's machine."),
        summary: name.to_owned(),
        category: None,
        input_schema: serde_json::from_str(STRICT_EMPTY).unwrap(),
        strict: true,
        exclusive: false,
        action: false,
        needs: NeedsDecl::default(),
        secrets: Vec::new(),
    }
}

fn engine(config: &str) -> Engine {
    Engine::builder()
        .config(EngineConfig::parse(config).unwrap())
        .build()
        .expect("the engine starts")
}

fn catalog(engine: &Engine, agent: &str) -> Vec<Value> {
    let bytes = engine
        .agent(agent)
        .unwrap()
        .catalog(Format::OpenAi, "en-US");
    serde_json::from_slice(&bytes).unwrap()
}

fn described(catalog: &[Value], wire_name: &str) -> Vec<String> {
    catalog
        .iter()
        .filter(|tool| tool["function"]["name"] == wire_name)
        .map(|tool| tool["function"]["description"].as_str().unwrap().to_owned())
        .collect()
}

/// Why `session` refused `tool`.
fn why(session: &engine_core::DevSession, tool: &str) -> String {
    session
        .refused()
        .iter()
        .find(|refused| refused.tool == tool)
        .unwrap_or_else(|| panic!("`{tool}` is refused: {:?}", session.refused()))
        .why
        .clone()
}

fn run<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

#[test]
fn a_session_tool_with_a_linked_id_replaces_it_for_its_agent_only_while_connected() {
    let engine = engine("[agents.shop]\n[agents.other]\n");
    let linked = described(&catalog(&engine, "shop"), "weather__weather");
    assert_eq!(linked.len(), 1);
    let link = Link::new(dev_answer);
    let session = engine
        .open_dev_session(
            "shop",
            vec![decl("weather", "weather")],
            vec![],
            link.clone(),
        )
        .unwrap();
    assert_eq!(session.equipped(), ["weather:weather"]);
    assert_eq!(
        described(&catalog(&engine, "shop"), "weather__weather"),
        ["weather, the version on the developer's machine."],
        "listed once, as the session declares it"
    );
    assert_eq!(
        described(&catalog(&engine, "other"), "weather__weather"),
        linked
    );
    let arguments = r#"{"city":"Rome","days":1,"units":null}"#;
    run(async {
        let shop = engine.turn("shop").unwrap();
        let output = engine
            .call(&shop, Call::new("weather__weather", "{}"))
            .await
            .unwrap();
        assert_eq!(output, r#"{"from":"dev"}"#);
        let other = engine.turn("other").unwrap();
        let output = engine
            .call(&other, Call::new("weather__weather", arguments))
            .await
            .unwrap();
        assert!(
            output.contains("Rome"),
            "the linked tool answers the other agent: {output}"
        );
    });
    drop(session);
    assert_eq!(
        described(&catalog(&engine, "shop"), "weather__weather"),
        linked
    );
    run(async {
        let shop = engine.turn("shop").unwrap();
        let output = engine
            .call(&shop, Call::new("weather__weather", arguments))
            .await
            .unwrap();
        assert!(
            output.contains("Rome"),
            "linked again once the session closed: {output}"
        );
    });
    assert_eq!(link.frames().len(), 1);
}

#[test]
fn a_session_tool_a_linked_tool_could_not_be_is_refused_with_why() {
    let engine = engine(
        "[agents.shop]\nsecrets = { crm_api_key = \"k\", own = \"o\" }\n\
         [agents.shop.dev]\nsecrets = [\"own\"]\n",
    );
    let mut loose = decl("journal", "loose");
    loose.input_schema = json!({"type": "object", "properties": {"a": {"type": "string"}}});
    let mut action = decl("journal", "act");
    action.action = true;
    action.exclusive = true;
    let mut project = decl("journal", "files");
    project.needs.project = true;
    let mut theirs = decl("journal", "theirs");
    theirs.secrets = vec![SecretDecl {
        key: "crm_api_key".into(),
    }];
    // acme's own secret, for a session tool of acme, but not one listed for sessions.
    let mut unlisted = decl("acme", "unlisted");
    unlisted.secrets = vec![SecretDecl {
        key: "crm_api_key".into(),
    }];
    let mut knowing = decl("journal", "knowing");
    knowing.needs.knowledge = Some((plugin_sdk::knowledge::KnowledgeLevel::Write, true));
    let mut own = decl("journal", "own");
    own.secrets = vec![SecretDecl { key: "own".into() }];
    let tools = vec![
        loose,
        action,
        project,
        theirs,
        unlisted,
        knowing,
        decl("builtin", "reserved"),
        decl("journal", "bad:name"),
        decl("journal", "twice"),
        decl("journal", "twice"),
        own,
    ];
    let session = engine
        .open_dev_session("shop", tools, vec![], Link::new(dev_answer))
        .unwrap();
    assert_eq!(session.equipped(), ["journal:twice", "journal:own"]);
    let why = |tool: &str| why(&session, tool);
    assert!(why("journal:loose").contains("not strict-compatible"));
    assert!(why("journal:act").contains("it is exclusive"));
    assert!(why("journal:files").contains("project files"));
    assert!(why("journal:theirs").contains("of the linked plugin `acme`"));
    assert!(why("acme:unlisted").contains("[agents.shop.dev] secrets"));
    assert!(why("journal:knowing").contains("knowledge base at `write`"));
    assert!(why("builtin:reserved").contains("kept for the engine"));
    assert!(why("journal:bad:name").contains("not valid"));
    assert!(why("journal:twice").contains("twice"));
    assert!(engine
        .open_dev_session("nobody", vec![], vec![], Link::new(dev_answer))
        .is_err());
}

#[test]
fn a_call_carries_only_the_secrets_it_declares_and_keeps_state_only_when_it_succeeds() {
    let engine = engine(
        "[agents.shop]\nsecrets = { own = \"own-value\", other = \"other-value\" }\n\
         [agents.shop.dev]\nsecrets = [\"own\", \"other\"]\n",
    );
    fn writes(frame: &CallFrame) -> Option<Outcome> {
        let state_writes = [("count".to_owned(), Some(json!(1)))].into();
        Some(if frame.arguments.contains("fail") {
            Outcome::Err {
                kind: "failed".into(),
                message: "refused".into(),
            }
        } else {
            Outcome::Ok {
                output: "true".into(),
                state_writes,
            }
        })
    }
    let mut counting = decl("journal", "count");
    counting.needs.conversation = true;
    counting.secrets = vec![SecretDecl { key: "own".into() }];
    counting.input_schema = json!({"type": "object", "properties": {"mode": {"type": "string"}}, "required": ["mode"], "additionalProperties": false});
    let link = Link::new(writes);
    let _session = engine
        .open_dev_session("shop", vec![counting], vec![], link.clone())
        .unwrap();
    run(async {
        let turn = engine.turn("shop").unwrap().in_conversation("ana", "c1");
        let failed = engine
            .call(&turn, Call::new("journal__count", r#"{"mode":"fail"}"#))
            .await;
        assert_eq!(failed.unwrap_err().kind(), CallErrorKind::Failed);
        engine
            .call(&turn, Call::new("journal__count", r#"{"mode":"ok"}"#))
            .await
            .unwrap();
        engine
            .call(&turn, Call::new("journal__count", r#"{"mode":"ok"}"#))
            .await
            .unwrap();
    });
    let frames = link.frames();
    assert_eq!(
        frames[0]["secrets"],
        json!([{"key": "own", "value": "own-value", "chosen": false}])
    );
    assert_eq!(
        frames[0]["turn"],
        json!({"subscriber": "ana", "conversation": "c1"})
    );
    assert_eq!(frames[0]["state"], json!({}));
    assert_eq!(
        frames[1]["state"],
        json!({}),
        "the failed call's write was not kept"
    );
    assert_eq!(
        frames[2]["state"],
        json!({"count": 1}),
        "the successful call's was"
    );
}

#[test]
fn a_session_action_is_offered_refused_as_a_direct_call_and_refused_when_shaped_unlike_one() {
    let engine = engine("[agents.shop]\n");
    let link = Link::new(dev_answer);
    let mut action = decl("shop", "publish");
    action.action = true;
    let mut reads_model = decl("shop", "publish_smartly");
    reads_model.action = true;
    reads_model.needs.model = true;
    let mut reads_history = decl("shop", "publish_in_context");
    reads_history.action = true;
    reads_history.needs.history = true;
    let session = engine
        .open_dev_session(
            "shop",
            vec![action, reads_model, reads_history],
            vec![],
            link.clone(),
        )
        .unwrap();
    assert_eq!(session.equipped(), ["shop:publish"]);
    assert!(
        why(&session, "shop:publish_smartly").contains("it reads the model"),
        "{:?}",
        session.refused()
    );
    assert!(
        why(&session, "shop:publish_in_context").contains("it reads the conversation's history"),
        "{:?}",
        session.refused()
    );
    assert_eq!(
        described(&catalog(&engine, "shop"), "shop__publish").len(),
        1
    );
    run(async {
        let turn = engine.turn("shop").unwrap();
        let error = engine
            .call(&turn, Call::new("shop__publish", "{}"))
            .await
            .unwrap_err();
        assert!(error.to_string().contains("is a staged action"), "{error}");
    });
    assert!(
        link.frames().is_empty(),
        "a direct call sends the session nothing"
    );
}

#[test]
fn sessions_per_agent_and_calls_per_session_are_capped_and_a_late_call_is_cancelled() {
    let engine = engine("[agents.shop]\n");
    let sessions: Vec<_> = (0..MAX_SESSIONS_PER_AGENT)
        .map(|_| {
            engine
                .open_dev_session("shop", vec![], vec![], Link::new(never))
                .unwrap()
        })
        .collect();
    let refused = engine
        .open_dev_session("shop", vec![], vec![], Link::new(never))
        .unwrap_err();
    assert!(refused.contains("development sessions open"), "{refused}");
    drop(sessions);

    let link = Link::new(never);
    let _session = engine
        .open_dev_session("shop", vec![decl("journal", "slow")], vec![], link.clone())
        .unwrap();
    run(async {
        let turn = engine.turn("shop").unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut waiting = Vec::new();
        for _ in 0..MAX_CALLS_PER_SESSION {
            let mut call =
                Box::pin(engine.call(&turn, Call::new("journal__slow", "{}").deadline(deadline)));
            assert!(futures::poll!(call.as_mut()).is_pending());
            waiting.push(call);
        }
        let over = engine
            .call(&turn, Call::new("journal__slow", "{}"))
            .await
            .unwrap_err();
        assert_eq!(over.kind(), CallErrorKind::Failed);
        assert!(
            over.message().contains("calls already"),
            "{}",
            over.message()
        );
        drop(waiting);
        assert_eq!(link.dropped.load(Ordering::SeqCst), MAX_CALLS_PER_SESSION);
        let late = engine
            .call(
                &turn,
                Call::new("journal__slow", "{}")
                    .deadline(Instant::now() + Duration::from_millis(50)),
            )
            .await
            .unwrap_err();
        assert_eq!(late.kind(), CallErrorKind::TimedOut);
        assert_eq!(
            link.dropped.load(Ordering::SeqCst),
            MAX_CALLS_PER_SESSION + 1,
            "the link's call was dropped at the deadline, which tells the session"
        );
    });
}

fn hook(name: &str, event: &str, binding: Binding) -> HookDecl {
    HookDecl {
        namespace: "journal".to_owned(),
        name: name.to_owned(),
        event: event.to_owned(),
        binding,
        timeout_ms: 1000,
        mutates_response: false,
        needs: NeedsDecl::default(),
        secrets: Vec::new(),
    }
}

/// Answers every hook call with context naming the hook the frame names.
fn injects(frame: &CallFrame) -> Option<Outcome> {
    assert!(frame.event.is_some(), "a hook's frame names its event");
    let text = format!("from {}", frame.tool);
    let outcome = HookOutcome::InjectContext { text };
    Some(ok(&serde_json::to_string(&outcome).unwrap()))
}

/// Runs one turn of `agent` with `message`: the context hooks injected before the model.
fn injected(engine: &Engine, agent: &str, message: &str) -> Vec<String> {
    run(async {
        let turn = engine
            .turn(agent)
            .unwrap()
            .in_conversation("ana", "c-hooks");
        let mut seen = Vec::new();
        engine
            .run_turn(&turn, message, false, |input: engine_core::ModelInput| {
                seen = input.injected_context;
                async { Ok::<_, String>("fine".to_owned()) }
            })
            .await
            .unwrap();
        seen
    })
}

#[test]
fn a_session_hook_replaces_the_one_it_overrides_and_a_bound_one_runs_at_its_position() {
    let engine = engine("[agents.shop]\n[agents.other]\n");
    let link = Link::new(injects);
    let session = engine
        .open_dev_session(
            "shop",
            vec![],
            vec![
                hook(
                    "hint_v2",
                    "message_received",
                    Binding::Overrides {
                        hook: "acme:order_ids_hint".into(),
                    },
                ),
                hook("first", "message_received", Binding::Bound { position: 0 }),
            ],
            link.clone(),
        )
        .unwrap();
    assert_eq!(session.hooks(), ["acme:order_ids_hint", "first"]);
    // The linked hint injects for a message about orders; the session's runs instead,
    // after the bound hook (position 0, before the hint's).
    assert_eq!(
        injected(&engine, "shop", "where is my order?"),
        ["from journal:first", "from journal:hint_v2"]
    );
    let linked = injected(&engine, "other", "where is my order?");
    assert_eq!(linked.len(), 1);
    assert!(
        !linked[0].starts_with("from"),
        "the other agent runs the linked hint: {linked:?}"
    );
    drop(session);
    assert_eq!(injected(&engine, "shop", "where is my order?"), linked);
}

#[test]
fn a_session_hook_that_cannot_run_as_declared_is_refused_with_why() {
    let engine = engine("[agents.shop]\n");
    let mut mutating = hook(
        "changes",
        "message_received",
        Binding::Bound { position: 1 },
    );
    mutating.mutates_response = true;
    let mut slow = hook("slow", "message_received", Binding::Bound { position: 1 });
    slow.timeout_ms = 120_000;
    let session = engine
        .open_dev_session(
            "shop",
            vec![],
            vec![
                hook(
                    "acme:named",
                    "message_received",
                    Binding::Bound { position: 1 },
                ),
                hook(
                    "missing",
                    "message_received",
                    Binding::Overrides {
                        hook: "acme:nothing".into(),
                    },
                ),
                hook(
                    "elsewhere",
                    "response_sent",
                    Binding::Overrides {
                        hook: "acme:order_ids_hint".into(),
                    },
                ),
                hook("when", "someday", Binding::Bound { position: 1 }),
                mutating,
                slow,
            ],
            Link::new(injects),
        )
        .unwrap();
    assert!(session.hooks().is_empty(), "{:?}", session.hooks());
    let why = |tool: &str| why(&session, tool);
    assert!(why("journal:acme:named").contains("bare"));
    assert!(why("journal:missing").contains("runs no hook `acme:nothing`"));
    assert!(why("journal:elsewhere").contains("runs at `message_received`"));
    assert!(why("journal:when").contains("not an event"));
    assert!(why("journal:changes").contains("only a `response_generated` hook"));
    assert!(why("journal:slow").contains("timeout"));
}

#[test]
fn an_update_swaps_what_a_session_serves_without_closing_it() {
    let engine = engine("[agents.shop]\n");
    let mut session = engine
        .open_dev_session(
            "shop",
            vec![decl("journal", "first")],
            vec![],
            Link::new(dev_answer),
        )
        .unwrap();
    let names = |engine: &Engine| -> Vec<String> {
        catalog(engine, "shop")
            .iter()
            .filter_map(|tool| tool["function"]["name"].as_str())
            .filter(|name| name.starts_with("journal__"))
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(names(&engine), ["journal__first"]);
    let id = session.id().to_owned();
    engine.update_dev_session(
        &mut session,
        vec![decl("journal", "second")],
        vec![hook(
            "hint",
            "message_received",
            Binding::Bound { position: 1 },
        )],
    );
    assert_eq!(session.id(), id, "the same session");
    assert_eq!(names(&engine), ["journal__second"]);
    assert_eq!(session.hooks(), ["hint"]);
}

#[test]
fn a_take_that_would_not_fit_leaves_the_artifact_in_place() {
    use engine_core::stores::MemoryArtifacts;
    use plugin_sdk::artifacts::{Artifact, ArtifactError};
    let store = MemoryArtifacts::new(Default::default());
    let artifact = Artifact {
        bytes: vec![7; 100],
        filename: "big.bin".into(),
        mime: "application/octet-stream".into(),
    };
    let handle = store.put("c1", artifact, None).unwrap();
    assert_eq!(
        store.take_within("c1", &handle, 99),
        Err(ArtifactError::TooLarge {
            size: 100,
            limit: 99
        })
    );
    let taken = store.take_within("c1", &handle, 100).unwrap().unwrap();
    assert_eq!(taken.bytes.len(), 100, "still there after the refusal");
    assert_eq!(store.take("c1", &handle), None, "taken once");
}

/// Answers a call with the first secret it was sent, as a careless action might.
fn echoes_its_secret(frame: &CallFrame) -> Option<Outcome> {
    let secret = frame.secrets.first().map(|secret| secret.value.clone());
    Some(ok(&json!({ "echo": secret }).to_string()))
}

/// A provider that answers each request with the next of its replies.
struct Scripted(Mutex<std::collections::VecDeque<ProviderReply>>);

impl Provider for Scripted {
    fn wire(&self) -> Wire {
        Wire::Openai
    }

    fn respond<'a>(
        &'a self,
        _: ProviderRequest<'a>,
        _: &'a mut (dyn FnMut(&str) + Send),
    ) -> BoxFuture<'a, Result<ProviderReply, ProviderError>> {
        let reply = self
            .0
            .lock()
            .unwrap()
            .pop_front()
            .expect("a scripted reply");
        Box::pin(std::future::ready(Ok(reply)))
    }
}

#[test]
fn a_session_actions_stage_is_sent_its_arguments_alone_and_its_perform_what_a_linked_action_gets() {
    let config = EngineConfig::parse(
        "[agents.shop]\nsecrets = { own = \"own-secret-4711\" }\n\
         [agents.shop.dev]\nsecrets = [\"own\"]\n\
         [agents.shop.turn]\nprovider = \"scripted\"\n",
    )
    .unwrap();
    let call = ToolCall {
        id: "c0".into(),
        name: "shop__publish".into(),
        arguments: "{}".into(),
        extra: Default::default(),
    };
    let replies = [
        ProviderReply {
            tool_calls: vec![call],
            ..ProviderReply::default()
        },
        ProviderReply {
            text: "Publishing.".into(),
            ..ProviderReply::default()
        },
    ];
    let engine = Engine::builder()
        .config(config)
        .provider("scripted", Arc::new(Scripted(Mutex::new(replies.into()))))
        .conversations(Conversations::memory())
        .build()
        .expect("the engine starts");
    // An action that reads the subscriber (the conversation), audits and has a secret.
    let mut action = decl("shop", "publish");
    action.action = true;
    action.needs.conversation = true;
    action.needs.audit = true;
    action.secrets = vec![SecretDecl { key: "own".into() }];
    let link = Link::new(echoes_its_secret);
    let _session = engine
        .open_dev_session("shop", vec![action], vec![], link.clone())
        .unwrap();
    let events = run(async {
        let turn = engine.turn("shop").unwrap().in_conversation("ana", "c");
        let mut events = Vec::new();
        engine
            .converse(
                &turn,
                Some("Publish."),
                &TurnControl::default(),
                &mut |event| events.push(event),
            )
            .await;
        events
    });
    // Its output is redacted as a linked action's before the events and the history.
    let performed: Vec<String> = events
        .iter()
        .filter_map(|event| match event {
            TurnEvent::ActionPerformed { result, .. } => Some(result.get().to_owned()),
            _ => None,
        })
        .collect();
    assert_eq!(performed.len(), 1, "{events:?}");
    assert!(
        !performed[0].contains("own-secret-4711"),
        "{}",
        performed[0]
    );
    assert!(performed[0].contains("[REDACTED]"), "{}", performed[0]);
    let frames = link.frames();
    assert_eq!(frames.len(), 2, "{frames:?}");
    let (stage, perform) = (&frames[0], &frames[1]);
    assert_eq!(stage["step"], "stage");
    assert_eq!(stage["arguments"], "{}");
    assert_eq!(stage["secrets"], json!([]), "{stage}");
    assert_eq!(stage["turn"], Value::Null, "{stage}");
    assert_eq!(stage["grants"]["audit"], false, "{stage}");
    assert_eq!(perform["step"], "perform");
    assert_eq!(perform["secrets"][0]["key"], "own", "{perform}");
    assert_eq!(perform["turn"]["subscriber"], "ana", "{perform}");
    assert_eq!(perform["grants"]["audit"], true, "{perform}");
    // Nothing of the conversation but its identity, as a linked action.
    assert_eq!(perform["state"], Value::Null, "{perform}");
    assert_eq!(perform["grants"]["artifacts"], false, "{perform}");
}

/// A link whose call asks the engine as a dev process would, each question and answer
/// through the wire's JSON: writes three documents, then lists them two at a time.
struct ListsKnowledge;

/// `question` as the author side sends it, answered, and the answer as it reads it.
async fn ask(serve: &DevServe, question: Value) -> Value {
    let question = serde_json::from_value(question).expect("a question of the protocol");
    let answer = serde_json::to_value(serve.answer(question).await).unwrap();
    answer["ok"].clone()
}

impl DevLink for ListsKnowledge {
    fn call(
        &self,
        _frame: CallFrame,
        serve: DevServe,
    ) -> BoxFuture<'static, Result<Outcome, Disconnected>> {
        Box::pin(async move {
            for name in ["c.md", "a.md", "b.md"] {
                let written = ask(
                    &serve,
                    json!({"ask": "write_document", "level": "write", "filename": name, "content": "x"}),
                )
                .await;
                assert_eq!(
                    written["Ok"]["document"]["origin_ref"], "journal",
                    "{written}"
                );
            }
            let first = ask(
                &serve,
                json!({"ask": "list_documents", "level": "read", "limit": 2, "after": null}),
            )
            .await;
            let second = ask(
                &serve,
                json!({"ask": "list_documents", "level": "read", "limit": 2, "after": first["next"]}),
            )
            .await;
            Ok(ok(&json!([first, second]).to_string()))
        })
    }
}

#[test]
fn a_session_tool_lists_the_knowledge_base_a_page_at_a_time() {
    let engine = Engine::builder()
        .config(EngineConfig::parse("[agents.shop]\nknowledge = \"write\"\n").unwrap())
        .knowledge_store(Arc::new(engine_core::stores::MemoryKnowledge::new(
            Default::default(),
        )))
        .build()
        .expect("the engine starts");
    let mut lister = decl("journal", "lister");
    lister.needs.knowledge = Some((plugin_sdk::knowledge::KnowledgeLevel::Write, true));
    let _session = engine
        .open_dev_session("shop", vec![lister], vec![], Arc::new(ListsKnowledge))
        .unwrap();
    let output = run(async {
        let shop = engine.turn("shop").unwrap();
        engine
            .call(&shop, Call::new("journal__lister", "{}"))
            .await
            .unwrap()
    });
    let pages: Value = serde_json::from_str(&output).unwrap();
    let names = |page: &Value| -> Vec<String> {
        page["documents"]
            .as_array()
            .unwrap()
            .iter()
            .map(|document| document["filename"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(names(&pages[0]), ["a.md", "b.md"], "{pages}");
    assert_eq!(pages[0]["next"], "b.md");
    assert_eq!(names(&pages[1]), ["c.md"], "{pages}");
    assert_eq!(pages[1]["next"], Value::Null);
    assert_eq!(pages[1]["documents"][0]["origin"], "plugin");
}
