//! The tool context, rule by rule, through `Engine::call` with tools that take each
//! extractor: secrets and equipping, audit redaction, state, artifacts, knowledge on the
//! real SQLite store, model access through a provider double on a real socket, and the
//! turn's identity.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use engine_core::{
    AgentTurn, CallError, CallErrorKind, Engine, EngineConfig, Linked, RedactingWriter, Registry,
    Stores, ToolCall,
};
use plugin_sdk::prelude::*;
use plugin_sdk::{ChatMessage, Conversation, Document, Mutation, Subscriber};
use serde_json::{json, Value};

plugin_sdk::plugin! { namespace = "ctx", engine = ">=0.1" }

// ---- tools ----------------------------------------------------------------------------

/// The CRM's key.
#[derive(Secrets)]
pub struct CrmSecrets {
    /// The key.
    #[secret(label = { "en-US": "CRM API key", "it-IT": "Chiave API del CRM" }, description = "The key of the CRM account.")]
    pub crm_api_key: Secret,
}

/// The mail service's token.
#[derive(Secrets)]
pub struct MailSecrets {
    /// The token.
    #[secret(label = "Mail token", description = "The token of the mail service.")]
    pub mail_token: Secret,
}

/// Logs its own key by mistake, and answers how the key prints.
#[define_tool]
async fn crm_leak(secrets: CrmSecrets, audit: &Audit) -> String {
    let key = secrets.crm_api_key.expose();
    audit.record(
        &format!("used {key}"),
        json!({ "key": key, "nested": [format!("Bearer {key}")] }),
    );
    format!("{:?} {}", secrets.crm_api_key, secrets.crm_api_key)
}

/// Panics with its key in the message.
#[define_tool]
async fn crm_panic(secrets: CrmSecrets) -> String {
    panic!("the CRM refused key {}", secrets.crm_api_key.expose())
}

/// Shows what its context holds.
#[define_tool]
async fn context_keys(_secrets: CrmSecrets, context: &ToolContext) -> String {
    format!("{context:?}")
}

/// Sends mail.
#[define_tool]
async fn mail_send(secrets: MailSecrets) -> bool {
    !secrets.mail_token.expose().is_empty()
}

/// A state write.
#[derive(Deserialize, JsonSchema, ToolArgs)]
struct Put {
    key: String,
    value: String,
    /// Fail after writing.
    fail: bool,
    /// Wait this long after writing, before returning.
    wait_ms: u64,
}

/// Writes a value into the conversation's state.
#[define_tool]
async fn state_put(args: Put, state: &State) -> Result<String, ToolError> {
    state
        .set(&args.key, &args.value)
        .expect("a string serializes");
    tokio::time::sleep(Duration::from_millis(args.wait_ms)).await;
    if args.fail {
        return Err(ToolError::new("failed after writing"));
    }
    Ok(state.get::<String>(&args.key).unwrap_or_default())
}

/// A key.
#[derive(Deserialize, JsonSchema, ToolArgs)]
struct Key {
    key: String,
}

/// Reads a value of the conversation's state.
#[define_tool]
async fn state_get(args: Key, state: &State) -> Option<String> {
    state.get(&args.key)
}

/// Text to hand over.
#[derive(Deserialize, JsonSchema, ToolArgs)]
struct Text {
    text: String,
}

/// Keeps text as an artifact.
#[define_tool]
async fn artifact_put(args: Text, artifacts: &Artifacts) -> Result<ArtifactHandle, ToolError> {
    Ok(artifacts.put(args.text.into_bytes(), "note.txt", "text/plain")?)
}

/// A handle.
#[derive(Deserialize, JsonSchema, ToolArgs)]
struct Handle {
    handle: ArtifactHandle,
}

/// Takes an artifact's text.
#[define_tool]
async fn artifact_take(args: Handle, artifacts: &Artifacts) -> Option<String> {
    let artifact = artifacts.take(&args.handle)?;
    Some(String::from_utf8(artifact.bytes).expect("text"))
}

/// Who and where.
#[derive(Serialize, JsonSchema)]
struct Who {
    subscriber: String,
    conversation: String,
}

/// Says whom the turn is for.
#[define_tool]
async fn whoami(subscriber: Subscriber, conversation: Conversation) -> Who {
    Who {
        subscriber: subscriber.id().to_owned(),
        conversation: conversation.id().to_owned(),
    }
}

/// A document to write.
#[derive(Deserialize, JsonSchema, ToolArgs)]
struct Doc {
    filename: String,
    content: String,
}

/// A mutation's answer as the model would read it.
fn mutation(outcome: Mutation) -> Value {
    match outcome {
        Ok(written) => json!({ "ok": written }),
        Err(refusal) => json!({ "refused": refusal }),
    }
}

/// Writes a document.
#[define_tool]
async fn kb_write(args: Doc, kb: Knowledge<Write>) -> Value {
    mutation(kb.write(&args.filename, &args.content).await)
}

/// Writes any document, as a manager.
#[define_tool]
async fn kb_manage_write(args: Doc, kb: Knowledge<Manage>) -> Value {
    mutation(kb.write(&args.filename, &args.content).await)
}

/// An id.
#[derive(Deserialize, JsonSchema, ToolArgs)]
struct Id {
    id: i64,
}

/// Deletes a document.
#[define_tool]
async fn kb_delete(args: Id, kb: Knowledge<Write>) -> Value {
    mutation(kb.delete(args.id).await)
}

/// Reads a document.
#[define_tool]
async fn kb_get(args: Id, kb: Knowledge<Read>) -> Result<Option<String>, ToolError> {
    Ok(kb
        .get(args.id)
        .await?
        .map(|document: Document| document.content))
}

/// Searches, or says the knowledge base is not granted.
#[define_tool]
async fn kb_search(args: Text, kb: Option<Knowledge<Read>>) -> Result<Vec<String>, ToolError> {
    let Some(kb) = kb else {
        return Ok(vec!["knowledge is not granted".into()]);
    };
    let hits = kb.search(&args.text, 5).await?;
    Ok(hits.into_iter().map(|hit| hit.filename).collect())
}

/// Asks the fast model, or says model access is not granted.
#[define_tool]
async fn ask(args: Text, model: Option<Model>) -> Result<String, ToolError> {
    let Some(model) = model else {
        return Ok("no model access".into());
    };
    let request = ChatRequest {
        tier: Tier::Fast,
        system: Some("Answer briefly.".into()),
        messages: vec![ChatMessage::user(args.text)],
    };
    Ok(model.chat(request).await?.text)
}

// ---- helpers --------------------------------------------------------------------------

const KEY: &str = "crm-KEY-9f8e7d6c5b4a";

/// An engine over this file's tools only, configured by `config` (TOML).
fn engine(config: &str) -> Engine {
    let config = EngineConfig::parse(config).expect("the test configuration parses");
    Engine::new(Arc::new(registry_of_ctx()), &config, Stores::default())
}

async fn call(
    engine: &Engine,
    turn: &AgentTurn,
    tool: &str,
    arguments: Value,
) -> Result<Value, CallError> {
    let arguments = arguments.to_string();
    let output = engine.call(turn, ToolCall::new(tool, &arguments)).await?;
    Ok(serde_json::from_str(&output).expect("tools answer JSON"))
}

fn kind(result: Result<Value, CallError>) -> CallErrorKind {
    result.expect_err("the call fails").kind()
}

// ---- secrets --------------------------------------------------------------------------

const SECRETS_CONFIG: &str = r#"
[agents.crm]
secrets = { crm_api_key = "crm-KEY-9f8e7d6c5b4a" }

[agents.bare]
"#;

#[tokio::test]
async fn a_tool_is_equipped_only_where_every_key_it_declares_is_configured() {
    let engine = engine(SECRETS_CONFIG);
    let crm = engine.agent("crm").unwrap();
    let equipped: Vec<&str> = crm.tools().map(|tool| tool.id()).collect();
    assert!(equipped.contains(&"ctx:crm_leak"));
    assert!(!equipped.contains(&"ctx:mail_send"));
    let left: Vec<(&str, &[String])> = crm
        .left_out()
        .iter()
        .map(|left| (left.tool.as_str(), left.reasons.as_slice()))
        .collect();
    assert!(
        left.contains(&(
            "ctx:mail_send",
            &["the secret `mail_token` is not configured".to_owned()][..]
        )),
        "{left:?}"
    );

    // The model never sees a left-out tool: not in the catalog, and unknown if called.
    let catalog = crm.catalog(engine_core::Format::OpenAi, "en-US");
    let catalog = String::from_utf8_lossy(&catalog);
    assert!(catalog.contains("ctx__crm_leak") && !catalog.contains("ctx__mail_send"));
    let bare = engine.session("bare").unwrap();
    assert_eq!(
        kind(call(&engine, &bare, "ctx__crm_leak", json!({})).await),
        CallErrorKind::UnknownTool
    );

    // The secret's label reaches people in their language.
    let spec = engine
        .registry()
        .tool("ctx:crm_leak")
        .unwrap()
        .descriptor()
        .secret_specs()
        .next()
        .unwrap();
    assert_eq!(spec.label.resolve("it-IT"), "Chiave API del CRM");
}

#[tokio::test]
async fn a_tool_holds_the_keys_it_declares_and_no_other() {
    let engine = engine("[agents.both]\nsecrets = { crm_api_key = \"k1\", mail_token = \"k2\" }\n");
    let turn = engine.session("both").unwrap();
    let context = call(&engine, &turn, "ctx__context_keys", json!({}))
        .await
        .unwrap();
    let context = context.as_str().unwrap();
    assert!(context.contains("secrets: [\"crm_api_key\"]"), "{context}");
    assert!(
        !context.contains("mail_token") && !context.contains("k2"),
        "{context}"
    );
}

#[test]
fn a_secret_never_prints() {
    let secret = Secret::new("s3cr3t");
    assert_eq!(format!("{secret:?} {secret}"), "Secret(***) ***");
    assert_eq!(secret.expose(), "s3cr3t");
}

/// Everything the log writer received, as text.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn a_tool_that_logs_or_panics_with_its_secret_leaves_no_plaintext_anywhere() {
    let config = EngineConfig::parse(SECRETS_CONFIG).unwrap();
    let captured = Captured::default();
    let writer = {
        let captured = captured.clone();
        RedactingWriter::new(engine_core::redactor(&config), move || captured.clone())
    };
    let subscriber = tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(false)
        .finish();
    let _logging = tracing::subscriber::set_default(subscriber);

    let engine = engine(SECRETS_CONFIG);
    let turn = engine
        .turn("crm", "subscriber-1", "conversation-1")
        .unwrap();
    let output = call(&engine, &turn, "ctx__crm_leak", json!({}))
        .await
        .unwrap();
    assert_eq!(output, "Secret(***) ***");
    let panicked = call(&engine, &turn, "ctx__crm_panic", json!({})).await;
    let error = panicked.expect_err("the tool panicked");
    assert_eq!(error.kind(), CallErrorKind::Panicked);

    let log = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    assert!(
        log.contains("audit") && log.contains("used [REDACTED]"),
        "{log}"
    );
    assert!(log.contains("Bearer [REDACTED]"), "{log}");
    assert!(log.contains("the CRM refused key [REDACTED]"), "{log}");
    assert!(log.contains("subscriber-1"), "{log}");
    let everything = format!("{log}{output}{}", error.to_json());
    assert!(
        !everything.contains(KEY),
        "a secret in plain text:\n{everything}"
    );
}

#[tokio::test]
async fn the_audit_logger_redacts_a_contexts_own_secrets_without_an_engine() {
    let captured = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer({
            let captured = captured.clone();
            move || captured.clone()
        })
        .with_ansi(false)
        .finish();
    let _logging = tracing::subscriber::set_default(subscriber);
    let context = ToolContext::new().with_secret("crm_api_key", Secret::new(KEY));
    let tool = plugin_sdk::linked_tools()
        .find(|tool| tool.name == "crm_leak")
        .unwrap();
    tool.call(plugin_sdk::CallInput::new("{}", &context))
        .await
        .unwrap();
    let log = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    assert!(log.contains("[REDACTED]") && !log.contains(KEY), "{log}");
}

// ---- state ----------------------------------------------------------------------------

fn put(key: &str, value: &str, fail: bool, wait_ms: u64) -> Value {
    json!({ "key": key, "value": value, "fail": fail, "wait_ms": wait_ms })
}

#[tokio::test]
async fn state_writes_apply_only_when_the_call_succeeds() {
    let engine = engine("[agents.a]\n");
    let turn = engine.turn("a", "s", "c").unwrap();
    // The call reads its own write.
    assert_eq!(
        call(&engine, &turn, "ctx__state_put", put("x", "1", false, 0))
            .await
            .unwrap(),
        "1"
    );
    assert_eq!(
        call(&engine, &turn, "ctx__state_get", json!({ "key": "x" }))
            .await
            .unwrap(),
        "1"
    );
    // A failed call's write is dropped.
    assert_eq!(
        kind(call(&engine, &turn, "ctx__state_put", put("x", "2", true, 0)).await),
        CallErrorKind::Failed
    );
    assert_eq!(
        call(&engine, &turn, "ctx__state_get", json!({ "key": "x" }))
            .await
            .unwrap(),
        "1"
    );
    // Outside a conversation there is no state to read or write.
    let session = engine.session("a").unwrap();
    let outside = call(&engine, &session, "ctx__state_get", json!({ "key": "x" })).await;
    assert!(outside
        .expect_err("no state")
        .message()
        .contains("outside a conversation"));
    // Another conversation has its own state.
    let other = engine.turn("a", "s", "another").unwrap();
    assert_eq!(
        call(&engine, &other, "ctx__state_get", json!({ "key": "x" }))
            .await
            .unwrap(),
        Value::Null
    );
}

#[tokio::test]
async fn two_calls_in_one_turn_see_each_others_writes_only_once_the_first_has_finished() {
    let engine = engine("[agents.a]\n");
    let turn = engine.turn("a", "s", "c").unwrap();
    // In sequence: the second sees the first's write.
    call(
        &engine,
        &turn,
        "ctx__state_put",
        put("first", "done", false, 0),
    )
    .await
    .unwrap();
    assert_eq!(
        call(&engine, &turn, "ctx__state_get", json!({ "key": "first" }))
            .await
            .unwrap(),
        "done"
    );

    // In parallel: the reader started from the snapshot taken before the writer finished.
    let writer = call(
        &engine,
        &turn,
        "ctx__state_put",
        put("parallel", "late", false, 50),
    );
    let reader = call(
        &engine,
        &turn,
        "ctx__state_get",
        json!({ "key": "parallel" }),
    );
    let (written, read) = tokio::join!(writer, reader);
    assert_eq!(written.unwrap(), "late");
    assert_eq!(read.unwrap(), Value::Null);
    assert_eq!(
        call(
            &engine,
            &turn,
            "ctx__state_get",
            json!({ "key": "parallel" })
        )
        .await
        .unwrap(),
        "late"
    );
}

// ---- artifacts ------------------------------------------------------------------------

#[tokio::test]
async fn an_artifact_is_taken_once_only_in_its_conversation() {
    let engine = engine("[agents.a]\n");
    let here = engine.turn("a", "s", "here").unwrap();
    let there = engine.turn("a", "s", "there").unwrap();
    let handle = call(
        &engine,
        &here,
        "ctx__artifact_put",
        json!({ "text": "quote" }),
    )
    .await
    .unwrap();
    let handle = handle.as_str().unwrap().to_owned();
    assert_eq!(handle.len(), 32, "128 random bits in hex");
    let take = |turn| {
        call(
            &engine,
            turn,
            "ctx__artifact_take",
            json!({ "handle": handle }),
        )
    };
    // Another conversation gets nothing, and does not consume it.
    assert_eq!(take(&there).await.unwrap(), Value::Null);
    assert_eq!(take(&here).await.unwrap(), "quote");
    // Taken: gone, with the same answer as an unknown handle.
    assert_eq!(take(&here).await.unwrap(), Value::Null);
    let unknown = call(
        &engine,
        &here,
        "ctx__artifact_take",
        json!({ "handle": "0".repeat(32) }),
    )
    .await;
    assert_eq!(unknown.unwrap(), Value::Null);
    // Outside a conversation there are no artifacts.
    let session = engine.session("a").unwrap();
    assert_eq!(
        kind(
            call(
                &engine,
                &session,
                "ctx__artifact_put",
                json!({ "text": "x" })
            )
            .await
        ),
        CallErrorKind::Failed
    );
}

#[tokio::test]
async fn put_fails_clearly_over_the_size_limit_and_when_the_store_is_full() {
    let engine =
        engine("[artifacts]\nmax_bytes = 8\ncapacity_bytes = 12\nttl_secs = 60\n[agents.a]\n");
    let turn = engine.turn("a", "s", "c").unwrap();
    let too_large = call(
        &engine,
        &turn,
        "ctx__artifact_put",
        json!({ "text": "123456789" }),
    )
    .await;
    let error = too_large.expect_err("too large");
    assert!(
        error
            .message()
            .contains("9 bytes, and the engine accepts at most 8"),
        "{}",
        error.message()
    );
    call(
        &engine,
        &turn,
        "ctx__artifact_put",
        json!({ "text": "12345678" }),
    )
    .await
    .unwrap();
    let full = call(
        &engine,
        &turn,
        "ctx__artifact_put",
        json!({ "text": "12345" }),
    )
    .await;
    assert!(full.expect_err("full").message().contains("store is full"));
}

#[test]
fn an_artifact_expires_after_the_capped_ttl() {
    use plugin_sdk::{Artifact, ArtifactStore};
    let limits = engine_core::config::ArtifactLimits {
        max_bytes: 100,
        capacity_bytes: 100,
        ttl_secs: 0,
    };
    let store = engine_core::MemoryArtifacts::new(limits);
    let artifact = Artifact {
        bytes: b"x".to_vec(),
        filename: "x".into(),
        mime: "text/plain".into(),
    };
    // Asked for an hour, capped at zero: expired at once.
    let handle = store
        .put("c", artifact, Some(Duration::from_secs(3600)))
        .unwrap();
    assert_eq!(store.take("c", &handle), None);
}

#[test]
fn of_many_concurrent_takes_of_one_handle_exactly_one_gets_it() {
    use plugin_sdk::{Artifact, ArtifactStore};
    let store = Arc::new(engine_core::MemoryArtifacts::new(Default::default()));
    for _ in 0..20 {
        let artifact = Artifact {
            bytes: b"once".to_vec(),
            filename: "f".into(),
            mime: "text/plain".into(),
        };
        let handle = store.put("c", artifact, None).unwrap();
        let barrier = Arc::new(std::sync::Barrier::new(16));
        let takers: Vec<_> = (0..16)
            .map(|_| {
                let (store, handle, barrier) =
                    (Arc::clone(&store), handle.clone(), Arc::clone(&barrier));
                std::thread::spawn(move || {
                    barrier.wait();
                    store.take("c", &handle).is_some()
                })
            })
            .collect();
        let got = takers
            .into_iter()
            .map(|taker| taker.join().unwrap())
            .filter(|got| *got)
            .count();
        assert_eq!(got, 1);
    }
}

// ---- turn identity --------------------------------------------------------------------

#[tokio::test]
async fn the_subscriber_and_conversation_come_from_the_turn_not_the_model() {
    let engine = engine("[agents.a]\n");
    let turn = engine.turn("a", "subscriber-7", "conversation-3").unwrap();
    // The model sends nothing that could name them: the schema has no properties.
    let schema = engine
        .registry()
        .tool("ctx:whoami")
        .unwrap()
        .input_schema()
        .clone();
    assert_eq!(schema["properties"], json!({}));
    let who = call(&engine, &turn, "ctx__whoami", json!({}))
        .await
        .unwrap();
    assert_eq!(
        who,
        json!({ "subscriber": "subscriber-7", "conversation": "conversation-3" })
    );
    let forged = call(
        &engine,
        &turn,
        "ctx__whoami",
        json!({ "subscriber": "someone-else" }),
    )
    .await;
    assert_eq!(kind(forged), CallErrorKind::InvalidArguments);
    let session = engine.session("a").unwrap();
    let outside = call(&engine, &session, "ctx__whoami", json!({}))
        .await
        .expect_err("no turn");
    assert!(
        outside.message().contains("outside a conversation"),
        "{}",
        outside.message()
    );
}

// ---- knowledge ------------------------------------------------------------------------

fn knowledge_engine(dir: &std::path::Path, extra: &str) -> Engine {
    let config = format!(
        "data_dir = {:?}\n[knowledge]\nmax_document_bytes = 64\nmax_documents = 3\n{extra}",
        dir.display().to_string()
    );
    let parsed = EngineConfig::parse(&config).unwrap();
    Engine::from_config(Arc::new(registry_of_ctx()), &parsed).expect("the store opens")
}

/// A registry of this file's tools, without the example plugins engine-core's other
/// tests link.
fn registry_of_ctx() -> Registry {
    Registry::build(Linked {
        tools: plugin_sdk::linked_tools()
            .filter(|tool| (tool.plugin)().namespace == "ctx")
            .collect(),
        ..Linked::default()
    })
    .unwrap()
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("engine-core-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[tokio::test]
async fn knowledge_levels_decide_what_is_equipped_and_the_optional_form_degrades() {
    let dir = temp_dir("levels");
    let engine = knowledge_engine(
        &dir,
        "[agents.reader]\nknowledge = \"read\"\n[agents.none]\n",
    );
    let reader = engine.agent("reader").unwrap();
    let equipped: Vec<&str> = reader.tools().map(|tool| tool.id()).collect();
    assert!(equipped.contains(&"ctx:kb_get") && equipped.contains(&"ctx:kb_search"));
    assert!(!equipped.contains(&"ctx:kb_write"));
    let reasons = &reader
        .left_out()
        .iter()
        .find(|left| left.tool == "ctx:kb_write")
        .unwrap()
        .reasons;
    assert_eq!(
        reasons,
        &["it needs the knowledge base at `write`, and the agent grants read"]
    );
    let none = engine.agent("none").unwrap();
    assert!(
        none.tools().any(|tool| tool.id() == "ctx:kb_search"),
        "the optional form is always equipped"
    );
    let session = engine.session("none").unwrap();
    let degraded = call(&engine, &session, "ctx__kb_search", json!({ "text": "x" }))
        .await
        .unwrap();
    assert_eq!(degraded, json!(["knowledge is not granted"]));
}

#[tokio::test]
async fn writes_are_owned_by_their_plugin_and_refused_with_a_reason_never_an_error() {
    let dir = temp_dir("owned");
    let engine = knowledge_engine(
        &dir,
        "[agents.w]\nknowledge = \"write\"\n[agents.m]\nknowledge = \"manage\"\n",
    );
    let writer = engine.session("w").unwrap();
    let created = call(
        &engine,
        &writer,
        "ctx__kb_write",
        json!({ "filename": "faq.md", "content": "Refunds take five days." }),
    )
    .await
    .unwrap();
    assert_eq!(created["ok"]["created"], true, "{created}");
    assert_eq!(
        created["ok"]["document"]["origin"], "ctx",
        "the engine records the plugin"
    );
    let id = created["ok"]["document"]["id"].as_i64().unwrap();
    let updated = call(
        &engine,
        &writer,
        "ctx__kb_write",
        json!({ "filename": "faq.md", "content": "Refunds take three days." }),
    )
    .await
    .unwrap();
    assert_eq!(updated["ok"]["created"], false);

    let hits = call(
        &engine,
        &writer,
        "ctx__kb_search",
        json!({ "text": "refunds (three) \"days" }),
    )
    .await
    .unwrap();
    assert_eq!(
        hits,
        json!(["faq.md"]),
        "free text, quotes and parentheses included, is searched safely"
    );
    assert_eq!(
        call(&engine, &writer, "ctx__kb_get", json!({ "id": id }))
            .await
            .unwrap(),
        "Refunds take three days."
    );
    assert_eq!(
        call(&engine, &writer, "ctx__kb_get", json!({ "id": 999 }))
            .await
            .unwrap(),
        Value::Null
    );

    let too_large = call(
        &engine,
        &writer,
        "ctx__kb_write",
        json!({ "filename": "big.md", "content": "x".repeat(65) }),
    )
    .await
    .unwrap();
    assert_eq!(
        too_large["refused"],
        json!({ "reason": "too_large", "size": 65, "limit": 64 })
    );
    for name in ["b.md", "c.md"] {
        call(
            &engine,
            &writer,
            "ctx__kb_write",
            json!({ "filename": name, "content": "x" }),
        )
        .await
        .unwrap();
    }
    let full = call(
        &engine,
        &writer,
        "ctx__kb_write",
        json!({ "filename": "d.md", "content": "x" }),
    )
    .await
    .unwrap();
    assert_eq!(
        full["refused"],
        json!({ "reason": "limit_reached", "limit": 3 })
    );
    let missing = call(&engine, &writer, "ctx__kb_delete", json!({ "id": 999 }))
        .await
        .unwrap();
    assert_eq!(missing["refused"], json!({ "reason": "not_found" }));
}

#[tokio::test]
async fn below_manage_a_plugin_updates_only_its_own_documents() {
    use plugin_sdk::{KnowledgeLevel, KnowledgeStore, Refusal, Scope};
    let dir = temp_dir("manage");
    let store =
        engine_core::SqliteKnowledge::open(&dir.join("k.sqlite"), Default::default()).unwrap();
    let scope = |origin: &str, level| Scope {
        agent: "a".into(),
        origin: origin.into(),
        level,
    };
    let theirs = store
        .write(
            &scope("other-plugin", KnowledgeLevel::Write),
            "theirs.md",
            "v1",
        )
        .await
        .unwrap();
    let id = theirs.document.id;
    let mine = scope("ctx", KnowledgeLevel::Write);
    assert_eq!(
        store.write(&mine, "theirs.md", "v2").await,
        Err(Refusal::NotOwned)
    );
    assert_eq!(store.delete(&mine, id).await, Err(Refusal::NotOwned));
    assert_eq!(
        store
            .write(&scope("ctx", KnowledgeLevel::Read), "new.md", "x")
            .await,
        Err(Refusal::NotGranted)
    );
    let manager = scope("ctx", KnowledgeLevel::Manage);
    let updated = store.write(&manager, "theirs.md", "v2").await.unwrap();
    assert_eq!(
        updated.document.origin, "other-plugin",
        "managing keeps the author"
    );
    assert_eq!(
        store.delete(&manager, id).await.unwrap().document.content,
        "v2"
    );
    // Each agent reaches its own documents only.
    let elsewhere = Scope {
        agent: "b".into(),
        ..mine.clone()
    };
    store.write(&mine, "mine.md", "x").await.unwrap();
    assert!(store.list(&elsewhere, 10).await.unwrap().is_empty());
    assert_eq!(store.list(&mine, 10).await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_read_fails_on_a_store_error_which_is_not_not_found() {
    use plugin_sdk::{KnowledgeLevel, KnowledgeStore, Scope};
    let dir = temp_dir("broken");
    let path = dir.join("k.sqlite");
    let store = engine_core::SqliteKnowledge::open(&path, Default::default()).unwrap();
    let scope = Scope {
        agent: "a".into(),
        origin: "ctx".into(),
        level: KnowledgeLevel::Write,
    };
    assert_eq!(store.get(&scope, 1).await, Ok(None));
    // Another connection breaks the store under it.
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch("DROP TABLE documents_fts; DROP TABLE documents;")
        .unwrap();
    let error = store.get(&scope, 1).await.expect_err("a store error");
    assert!(error.to_string().contains("could not answer"), "{error}");
    assert!(store.search(&scope, "x", 5).await.is_err());
    assert_eq!(
        store.write(&scope, "x.md", "x").await,
        Err(plugin_sdk::Refusal::Unavailable),
        "a mutation still answers"
    );
}

// ---- model access ---------------------------------------------------------------------

/// A model provider double: OpenAI's chat completions wire format on a real socket.
/// Each answer costs 1,000 input and 1,000 output tokens; "slow" makes it wait.
async fn provider() -> (String, Arc<Mutex<Vec<Value>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post({
            let seen = Arc::clone(&seen);
            move |axum::Json(body): axum::Json<Value>| async move {
                seen.lock().unwrap().push(body.clone());
                let question = body["messages"].as_array().unwrap().last().unwrap()["content"].as_str().unwrap().to_owned();
                if question.contains("slow") {
                    tokio::time::sleep(Duration::from_secs(30)).await;
                }
                axum::Json(json!({
                    "model": body["model"],
                    "choices": [{ "message": { "role": "assistant", "content": format!("answer to {question}") } }],
                    "usage": { "prompt_tokens": 1000, "completion_tokens": 1000 },
                }))
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, seen)
}

fn model_engine(url: &str) -> Engine {
    let config = format!(
        "[gateway]\nbase_url = {url:?}\ntiers.fast = {{ model = \"tiny\", usd_per_million_input = 1.0, usd_per_million_output = 1.0 }}\n\
         [agents.thinker]\nmodel = {{ spend_cap_usd = 0.005 }}\n[agents.plain]\n"
    );
    Engine::from_config(
        Arc::new(registry_of_ctx()),
        &EngineConfig::parse(&config).unwrap(),
    )
    .unwrap()
}

#[tokio::test]
async fn model_calls_go_by_tier_through_the_gateway_and_stop_at_the_turns_spend_cap() {
    let (url, seen) = provider().await;
    let engine = model_engine(&url);
    let turn = engine.turn("thinker", "s", "c").unwrap();
    for question in ["one", "two", "three"] {
        let answer = call(&engine, &turn, "ctx__ask", json!({ "text": question }))
            .await
            .unwrap();
        assert_eq!(answer, format!("answer to {question}"));
    }
    // $0.002 a call against a $0.005 cap: the third crossed it, the fourth is refused.
    let refused = call(&engine, &turn, "ctx__ask", json!({ "text": "four" }))
        .await
        .expect_err("over the cap");
    assert!(
        refused.message().contains("spend cap is reached"),
        "{}",
        refused.message()
    );
    let calls = turn.spend().calls();
    assert_eq!(calls.len(), 3);
    assert!(calls.iter().all(|call| call.model == "tiny"
        && call.tool == "ctx:ask"
        && (call.cost_usd - 0.002).abs() < 1e-9));
    // The provider got the tier's model, never a name from the tool.
    let requests = seen.lock().unwrap().clone();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0]["model"], "tiny");
    assert_eq!(
        requests[0]["messages"][0],
        json!({ "role": "system", "content": "Answer briefly." })
    );
    // A new turn has a new budget.
    let next = engine.turn("thinker", "s", "c").unwrap();
    assert!(call(&engine, &next, "ctx__ask", json!({ "text": "five" }))
        .await
        .is_ok());
    // Without the grant, the tool gets no model.
    let plain = engine.session("plain").unwrap();
    assert_eq!(
        call(&engine, &plain, "ctx__ask", json!({ "text": "x" }))
            .await
            .unwrap(),
        "no model access"
    );
}

#[tokio::test]
async fn a_model_call_stops_at_the_tools_deadline_and_on_cancellation() {
    let (url, _) = provider().await;
    let engine = model_engine(&url);
    let turn = engine.turn("thinker", "s", "c").unwrap();
    let arguments = json!({ "text": "slow" }).to_string();
    let deadline = tokio::time::Instant::now() + Duration::from_millis(200);
    let late = engine
        .call(
            &turn,
            ToolCall::new("ctx__ask", &arguments).deadline(deadline),
        )
        .await;
    // The dispatch and the model call watch the same deadline and token: whichever
    // notices first, the call ends there, and nothing is spent.
    let late = late.expect_err("stopped");
    assert!(
        late.kind() == CallErrorKind::TimedOut
            || late.message().contains("passed the tool's deadline"),
        "{late:?}"
    );
    let token = engine_core::CancellationToken::new();
    let cancel = {
        let token = token.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            token.cancel();
        })
    };
    let cancelled = engine
        .call(
            &turn,
            ToolCall::new("ctx__ask", &arguments).cancel_on(&token),
        )
        .await;
    cancel.await.unwrap();
    let cancelled = cancelled.expect_err("stopped");
    assert!(
        cancelled.kind() == CallErrorKind::Cancelled
            || cancelled.message().contains("was cancelled"),
        "{cancelled:?}"
    );
    assert!(turn.spend().calls().is_empty(), "nothing was spent");
}
