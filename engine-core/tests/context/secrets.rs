//! Secrets: a tool is equipped only where its keys are configured, holds those and no
//! other, and leaves no plaintext in logs, outputs or errors.

use std::sync::Arc;

use engine_core::config::EngineConfig;
use engine_core::{CallErrorKind, Engine, RedactingWriter};
use plugin_sdk::engine::{CallInput, Redact};
use plugin_sdk::secrets::{Secret, SecretKind};
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

/// A key that needs escaping in JSON and in `Debug` output: quotes, a backslash, a
/// control character and a letter that is not ASCII. Ends with [`NASTY_MARK`].
const NASTY_KEY: &str = "crm-\"KEY\"\\\u{1}é-7d6c5b";

/// The end of [`NASTY_KEY`]: any form of it the redactor missed still shows this.
const NASTY_MARK: &str = "7d6c5b";

/// Set in the child process of the test below, which runs the calls.
const CHILD: &str = "ENGINE_CORE_SECRETS_TEST_CHILD";

/// The test below, by its full name, for the child process to run alone.
const LEAK_TEST: &str =
    "secrets::a_tool_that_logs_or_panics_with_its_secret_leaves_no_plaintext_on_stdout_or_stderr";

/// The panic hook writes to the process's real stderr, which a test in this process
/// cannot read: the test runs the calls in a child process (this test binary, filtered
/// to this test) and reads everything the child wrote.
#[test]
fn a_tool_that_logs_or_panics_with_its_secret_leaves_no_plaintext_on_stdout_or_stderr() {
    if std::env::var_os(CHILD).is_some() {
        return leak_in_this_process();
    }
    let child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", LEAK_TEST, "--nocapture"])
        .env(CHILD, "1")
        .output()
        .expect("the test binary runs");
    let stdout = String::from_utf8_lossy(&child.stdout);
    let stderr = String::from_utf8_lossy(&child.stderr);
    assert!(child.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("1 passed"),
        "the child ran the calls: {stdout}"
    );
    // The panic hook's report, the log line of the panic, the audit records.
    assert!(stderr.contains("panicked at"), "{stderr}");
    assert!(
        stderr.contains("the CRM refused key [REDACTED]"),
        "{stderr}"
    );
    assert!(stderr.contains("used [REDACTED]"), "{stderr}");
    assert!(stderr.contains("Bearer [REDACTED]"), "{stderr}");
    assert!(stderr.contains("subscriber-1"), "{stderr}");
    let everything = format!("{stdout}{stderr}");
    assert!(
        !everything.contains(NASTY_MARK),
        "a secret in plain text:\n{everything}"
    );
}

/// The child's part: the engine's panic hook and redacting log writer on the real
/// stderr, a tool that audits its key and one that panics with it.
fn leak_in_this_process() {
    let config = format!(
        "[agents.crm]\nsecrets = {{ crm_api_key = {} }}\n",
        serde_json::to_string(NASTY_KEY).unwrap()
    );
    let redact = engine_core::redactor(&EngineConfig::parse(&config).unwrap());
    engine_core::install_redacting_panic_hook(Arc::clone(&redact));
    let subscriber = tracing_subscriber::fmt()
        .with_writer(RedactingWriter::new(redact, std::io::stderr))
        .with_ansi(false)
        .finish();
    let _logging = tracing::subscriber::set_default(subscriber);

    let engine = engine(&config);
    let turn = in_conversation(&engine, "crm", "subscriber-1", "conversation-1");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let output = runtime
        .block_on(call(&engine, &turn, "ctx__crm_leak", json!({})))
        .unwrap();
    assert_eq!(output, "Secret(***) ***");
    let panicked = runtime.block_on(call(&engine, &turn, "ctx__crm_panic", json!({})));
    let error = panicked.expect_err("the tool panicked");
    assert_eq!(error.kind(), CallErrorKind::Panicked);
    println!("{output} {}", error.to_json());
}

#[tokio::test]
async fn the_audit_logger_redacts_a_contexts_own_secrets_without_an_engine() {
    let captured = crate::support::Captured::default();
    let _logging = captured.start();
    let context = ToolContext::new().with_secret("crm_api_key", Secret::new(KEY));
    let tool = plugin_sdk::engine::linked_tools()
        .find(|tool| tool.name == "crm_leak")
        .unwrap();
    tool.call(CallInput::new("{}", &context)).await.unwrap();
    let log = captured.text();
    assert!(log.contains("[REDACTED]") && !log.contains(KEY), "{log}");
}

#[tokio::test]
async fn a_select_secret_takes_one_of_its_choices_unredacted_and_a_refusal_never_quotes_the_value()
{
    let tool = plugin_sdk::engine::linked_tools()
        .find(|tool| tool.name == "mail_region")
        .unwrap();
    let kinds: Vec<SecretKind> = tool.secret_specs().map(|spec| spec.kind).collect();
    assert_eq!(kinds, [SecretKind::Select(&["eu", "us"]), SecretKind::Text]);
    let config = |region: &str| {
        format!("[agents.a]\nsecrets = {{ mail_region = {region:?}, mail_account = \"acct-1\" }}\n")
    };
    let engine = engine(&config("us"));
    let turn = engine.turn("a").unwrap();
    let answer = call(&engine, &turn, "ctx__mail_region", json!({}))
        .await
        .unwrap();
    // A select's value is one of the choices the plugin publishes: not redacted. A
    // `text` secret is shown as typed to whoever configures it, and still a secret.
    assert_eq!(answer, "us [REDACTED]");

    // A value that is no choice stays a secret wherever it goes.
    let redact = engine_core::redactor(&EngineConfig::parse(&config("mars-1")).unwrap());
    assert_eq!(redact.redact("region mars-1"), "region [REDACTED]");
    let redact = engine_core::redactor(&EngineConfig::parse(&config("eu")).unwrap());
    assert_eq!(redact.redact("region eu"), "region eu");

    let parsed = EngineConfig::parse(&config("mars-1")).unwrap();
    let error = Engine::builder()
        .backends(engine::default_backends())
        .config(parsed)
        .tools(plugin_sdk::engine::linked_tools().filter(|tool| (tool.plugin)().namespace == "ctx"))
        .build()
        .err()
        .expect("refused");
    let text = error.to_string();
    assert!(
        text.contains("`agents.a.secrets.mail_region` is not one of the values its `select` offers: set it to one of `eu`, `us`"),
        "{text}"
    );
    assert!(!text.contains("mars-1"), "the value is a secret: {text}");
}
