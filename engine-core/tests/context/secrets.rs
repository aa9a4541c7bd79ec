//! Secrets: a tool is equipped only where its keys are configured, holds those and no
//! other, and leaves no plaintext in logs, outputs or errors.

use std::sync::{Arc, Mutex};

use engine_core::config::EngineConfig;
use engine_core::{CallErrorKind, RedactingWriter};
use plugin_sdk::engine::CallInput;
use plugin_sdk::secrets::Secret;
use plugin_sdk::ToolContext;
use serde_json::json;

use crate::support::{call, engine, in_conversation, kind, tool, KEY};

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
    let bare = engine.turn("bare").unwrap();
    assert_eq!(
        kind(call(&engine, &bare, "ctx__crm_leak", json!({})).await),
        CallErrorKind::UnknownTool
    );

    // The secret's label reaches people in their language.
    let spec = tool(&engine, "ctx:crm_leak")
        .descriptor()
        .secret_specs()
        .next()
        .unwrap();
    assert_eq!(spec.label.resolve("it-IT"), "Chiave API del CRM");
}

#[tokio::test]
async fn a_tool_holds_the_keys_it_declares_and_no_other() {
    let engine = engine("[agents.both]\nsecrets = { crm_api_key = \"k1\", mail_token = \"k2\" }\n");
    let turn = engine.turn("both").unwrap();
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
    let turn = in_conversation(&engine, "crm", "subscriber-1", "conversation-1");
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
    let tool = plugin_sdk::engine::linked_tools()
        .find(|tool| tool.name == "crm_leak")
        .unwrap();
    tool.call(CallInput::new("{}", &context)).await.unwrap();
    let log = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    assert!(log.contains("[REDACTED]") && !log.contains(KEY), "{log}");
}
