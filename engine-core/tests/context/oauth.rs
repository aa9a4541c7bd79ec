//! OAuth tokens through the broker, with a flow double in place of the provider (the
//! real one is the example engine's `oauth` tests, against Authlib): a tool is offered
//! only by an agent with a client, gets a link before the user connects and the token
//! after; the token is redacted from its output and its audit records; the plugin's
//! undeclared provider is an error.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use engine_core::config::EngineConfig;
use engine_core::oauth::{FlowError, MemoryGrants, OAuthClient, OAuthFlow, SealKey, Tokens};
use engine_core::Engine;
use plugin_sdk::engine::BoxFuture;
use plugin_sdk::prelude::*;
use serde_json::json;

use crate::support::{call, in_conversation};

/// The provider's id: which one to ask.
#[derive(Deserialize, JsonSchema, ToolArgs)]
struct Provider {
    /// The provider's id.
    provider: String,
}

/// Uses the user's token, and carelessly quotes it in its record and its answer.
#[define_tool]
async fn oauth_leak(asked: Provider, oauth: &OAuth, audit: &Audit) -> Result<String, ToolError> {
    let token = oauth.token(&asked.provider).await?;
    audit.record("used", json!({ "authorization": token.bearer() }));
    // Upper case, which the redactor does not know: shows which token the tool got.
    Ok(format!(
        "token {} for {:?}, {}",
        token.secret(),
        token,
        token.secret().to_uppercase()
    ))
}

/// A provider that grants `access-<code>` for a code, and counts its requests.
#[derive(Default)]
struct Granting {
    exchanges: AtomicUsize,
}

impl OAuthFlow for Granting {
    fn authorize(
        &self,
        client: &OAuthClient,
        redirect_uri: &str,
        state: &str,
    ) -> Result<(String, String), String> {
        Ok((
            format!(
                "{}?state={state}&redirect_uri={redirect_uri}",
                client.authorize_url
            ),
            "verifier".to_owned(),
        ))
    }

    fn exchange<'a>(
        &'a self,
        client: &'a OAuthClient,
        _redirect_uri: &'a str,
        code: &'a str,
        verifier: &'a str,
    ) -> BoxFuture<'a, Result<Tokens, FlowError>> {
        self.exchanges.fetch_add(1, Ordering::SeqCst);
        let granted = (verifier == "verifier" && client.client_secret == "the-client-secret")
            .then(|| Tokens {
                access_token: format!("access-{code}"),
                refresh_token: Some(format!("refresh-{code}")),
                expires_at: Some(i64::MAX),
            })
            .ok_or(FlowError::InvalidGrant);
        Box::pin(async move { granted })
    }

    fn refresh<'a>(
        &'a self,
        _client: &'a OAuthClient,
        _refresh_token: &'a str,
    ) -> BoxFuture<'a, Result<Tokens, FlowError>> {
        Box::pin(async { Err(FlowError::InvalidGrant) })
    }
}

const CONFIG: &str = "[oauth]\npublic_url = \"https://engine.example.com\"\n\
     [agents.with]\nsecrets = { cal_secret = \"the-client-secret\" }\n\
     [agents.with.oauth.\"ctx:cal\"]\nclient_id = \"engine\"\nclient_secret = \"cal_secret\"\n\
     [agents.without]\n";

fn engine(flow: Arc<Granting>) -> Engine {
    Engine::builder()
        .oauth_key(SealKey::from_hex(&"ab".repeat(32)).unwrap())
        .config(EngineConfig::parse(CONFIG).unwrap())
        .tools(plugin_sdk::engine::linked_tools().filter(|tool| tool.name == "oauth_leak"))
        .grant_store(Arc::new(MemoryGrants::default()))
        .oauth_flow(flow)
        .build()
        .expect("the engine starts")
}

#[tokio::test]
async fn a_tool_gets_a_link_then_the_token_which_its_output_and_records_never_show() {
    let captured = crate::support::Captured::default();
    let _logging = captured.start();
    let flow = Arc::new(Granting::default());
    let engine = engine(Arc::clone(&flow));
    // Offered only where the agent has a client for the plugin's provider.
    let without = engine.agent("without").unwrap();
    let left = without.left_out();
    assert!(
        left[0].reasons[0].contains("the agent has no client for `ctx:cal`"),
        "{left:?}"
    );
    let turn = in_conversation(&engine, "with", "ada", "c-1");
    let asked = json!({ "provider": "cal" });
    let first = call(&engine, &turn, "ctx__oauth_leak", asked.clone()).await;
    let message = first.unwrap_err().message().to_owned();
    let link = message
        .split_whitespace()
        .find(|word| word.starts_with("https://engine.example.com/oauth/connect/"))
        .unwrap_or_else(|| panic!("no link in {message}"));
    let id = link.rsplit('/').next().unwrap();
    let started = engine.oauth_connect(id).await.unwrap();
    assert!(started
        .redirect
        .starts_with("https://auth.example.com/authorize?state="));
    let key = engine
        .oauth_callback(&started.state, Some(&started.state), "code-1")
        .await
        .unwrap();
    assert_eq!(
        (
            key.agent.as_str(),
            key.subscriber.as_str(),
            key.provider.as_str()
        ),
        ("with", "ada", "ctx:cal")
    );
    let output = call(&engine, &turn, "ctx__oauth_leak", asked.clone())
        .await
        .unwrap();
    assert_eq!(
        output,
        json!("token [REDACTED] for AccessToken([REDACTED]), ACCESS-CODE-1")
    );
    let log = captured.text();
    assert!(log.contains("Bearer [REDACTED]"), "{log}");
    assert!(!log.contains("access-code-1"), "{log}");
    // The same subscriber in another conversation has the grant; another has not.
    let elsewhere = in_conversation(&engine, "with", "ada", "c-2");
    assert!(call(&engine, &elsewhere, "ctx__oauth_leak", asked.clone())
        .await
        .is_ok());
    let other = in_conversation(&engine, "with", "eve", "c-3");
    let theirs = call(&engine, &other, "ctx__oauth_leak", asked)
        .await
        .unwrap_err();
    assert!(
        theirs.message().contains("has not connected `ctx:cal`"),
        "{}",
        theirs.message()
    );
    assert_eq!(flow.exchanges.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_provider_the_plugin_does_not_declare_is_an_error_saying_so() {
    let engine = engine(Arc::default());
    let turn = in_conversation(&engine, "with", "ada", "c-1");
    let error = call(
        &engine,
        &turn,
        "ctx__oauth_leak",
        json!({ "provider": "mail" }),
    )
    .await
    .unwrap_err();
    assert!(
        error
            .message()
            .contains("the plugin declares no OAuth provider `mail`"),
        "{}",
        error.message()
    );
}

#[tokio::test]
async fn a_sign_in_is_taken_once_and_only_by_the_browser_that_started_it() {
    let flow = Arc::new(Granting::default());
    let engine = engine(Arc::clone(&flow));
    let turn = in_conversation(&engine, "with", "ada", "c-1");
    let message = call(
        &engine,
        &turn,
        "ctx__oauth_leak",
        json!({ "provider": "cal" }),
    )
    .await
    .unwrap_err()
    .message()
    .to_owned();
    let id = message
        .split("/oauth/connect/")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap();
    use engine_core::oauth::CallbackError;
    // A link starts as many sign-ins as it is opened, until one completes.
    let previewed = engine.oauth_connect(id).await.unwrap();
    let started = engine.oauth_connect(id).await.unwrap();
    assert_ne!(previewed.state, started.state);
    let forged = engine
        .oauth_callback("forged", Some("forged"), "code")
        .await;
    assert_eq!(forged.unwrap_err(), CallbackError::Unknown);
    let other_browser = engine
        .oauth_callback(&started.state, Some("another"), "code")
        .await;
    assert_eq!(other_browser.unwrap_err(), CallbackError::OtherBrowser);
    let no_cookie = engine.oauth_callback(&started.state, None, "code").await;
    assert_eq!(no_cookie.unwrap_err(), CallbackError::OtherBrowser);
    assert_eq!(
        flow.exchanges.load(Ordering::SeqCst),
        0,
        "nothing was spent"
    );
    assert!(engine
        .oauth_callback(&started.state, Some(&started.state), "code")
        .await
        .is_ok());
    let replayed = engine
        .oauth_callback(&started.state, Some(&started.state), "code")
        .await;
    assert_eq!(replayed.unwrap_err(), CallbackError::Unknown);
    assert_eq!(flow.exchanges.load(Ordering::SeqCst), 1);
    // Connected: the link is spent; a sign-in it started before still completes (and
    // replaces the grant: the same subscriber, through the same link).
    assert_eq!(
        engine.oauth_connect(id).await.unwrap_err(),
        CallbackError::Unknown
    );
    let late = engine
        .oauth_callback(&previewed.state, Some(&previewed.state), "code")
        .await;
    assert!(late.is_ok(), "{late:?}");
}

#[tokio::test]
async fn a_turn_without_a_subscriber_of_its_own_gets_no_ones_grant() {
    let flow = Arc::new(Granting::default());
    let engine = engine(Arc::clone(&flow));
    let asked = json!({ "provider": "cal" });
    let anonymous = in_conversation(&engine, "with", engine_core::ANONYMOUS_SUBSCRIBER, "c-0");
    let error = call(&engine, &anonymous, "ctx__oauth_leak", asked.clone())
        .await
        .unwrap_err();
    assert!(
        error.message().contains("names no user of its own"),
        "{}",
        error.message()
    );
    // Through a channel, a subscriber id is that channel's: `ada` of a webhook is not the
    // `ada` who connected through the turn route.
    let direct = in_conversation(&engine, "with", "ada", "c-1");
    let link = call(&engine, &direct, "ctx__oauth_leak", asked.clone())
        .await
        .unwrap_err()
        .message()
        .to_owned();
    let id = link.split("/oauth/connect/").nth(1).unwrap();
    let id = id.split_whitespace().next().unwrap();
    let started = engine.oauth_connect(id).await.unwrap();
    let key = engine
        .oauth_callback(&started.state, Some(&started.state), "code-1")
        .await
        .unwrap();
    assert_eq!(key.subscriber, "ada");
    assert!(call(&engine, &direct, "ctx__oauth_leak", asked.clone())
        .await
        .is_ok());
    let webhook = in_conversation(&engine, "with", "ada", "webhook:c-9").via("webhook", "c-9");
    let theirs = call(&engine, &webhook, "ctx__oauth_leak", asked)
        .await
        .unwrap_err();
    assert!(
        theirs.message().contains("has not connected"),
        "{}",
        theirs.message()
    );
}
