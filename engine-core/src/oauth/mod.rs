//! The OAuth broker (seed 003's `ctx.oauth`, "registered into the engine's broker at
//! boot"): a tool asks for the subscriber's token of a provider its plugin declares; the
//! broker answers it from the grant it keeps (sealed, per agent, subscriber and
//! provider), refreshed when it expired, or with a link to connect. `engine serve` runs
//! the two routes a browser takes: the link, which sends the user to the provider with
//! PKCE and a `state` bound to that browser (a cookie), and the callback, which takes the
//! code once. The kernel speaks no HTTP: the flow's requests are an [`OAuthFlow`]'s
//! (`engine-providers`, on the `oauth2` crate).

mod call;
mod sealed;
mod store;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use plugin_sdk::engine::{BoxFuture, PluginManifest};
use plugin_sdk::oauth::OAuthError;
use serde::{Deserialize, Serialize};

pub(crate) use call::{CallBroker, CallRedaction};
pub use sealed::SealKey;
pub use store::{now_secs, GrantKey, GrantStore, GrantStoreError, MemoryGrants};

use crate::config::{AgentConfig, EngineConfig};

/// The path of the callback under `[oauth] public_url`.
pub const CALLBACK_PATH: &str = "/oauth/callback";
/// The path a connect link starts with, followed by its id.
pub const CONNECT_PATH: &str = "/oauth/connect/";
/// Seconds before its expiry at which a token counts as expired: a request that leaves
/// with it still has time to be answered.
const EXPIRY_SKEW_SECS: i64 = 30;

/// An agent's client for a provider: the plugin's declaration with the agent's
/// configuration over it.
#[derive(Clone, PartialEq, Eq)]
pub struct OAuthClient {
    /// The provider, as `<namespace>:<id>`.
    pub provider: String,
    /// The client's id.
    pub client_id: String,
    /// The client's secret.
    pub client_secret: String,
    /// The authorization endpoint.
    pub authorize_url: String,
    /// The token endpoint.
    pub token_url: String,
    /// The scopes asked for.
    pub scopes: Vec<String>,
}

impl std::fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthClient")
            .field("provider", &self.provider)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

impl OAuthClient {
    /// The client `agent` configures for the provider `id` of `plugin`, if it does and
    /// the plugin declares it.
    pub fn of(agent: &AgentConfig, plugin: &PluginManifest, id: &str) -> Result<Self, OAuthError> {
        let declared = plugin
            .oauth
            .iter()
            .find(|provider| provider.id == id)
            .ok_or_else(|| OAuthError::Undeclared {
                provider: id.to_owned(),
            })?;
        let provider = format!("{}:{id}", plugin.namespace);
        let not_configured = || OAuthError::NotConfigured {
            provider: provider.clone(),
        };
        let configured = agent.oauth.get(&provider).ok_or_else(not_configured)?;
        // Checked at start-up; a reload that drops the secret leaves the client unusable.
        let secret = agent
            .secrets
            .get(&configured.client_secret)
            .ok_or_else(not_configured)?;
        Ok(Self {
            client_id: configured.client_id.clone(),
            client_secret: secret.clone(),
            authorize_url: configured
                .authorize_url
                .clone()
                .unwrap_or_else(|| declared.authorize_url.to_owned()),
            token_url: configured
                .token_url
                .clone()
                .unwrap_or_else(|| declared.token_url.to_owned()),
            scopes: declared
                .scopes
                .iter()
                .map(|scope| (*scope).to_owned())
                .collect(),
            provider,
        })
    }
}

/// What a provider's token endpoint answered.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    /// The access token.
    pub access_token: String,
    /// The refresh token, if the provider gave one.
    pub refresh_token: Option<String>,
    /// When the access token expires, in seconds since the epoch, if the provider said.
    pub expires_at: Option<i64>,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tokens([REDACTED])")
    }
}

/// Why a token endpoint gave no tokens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FlowError {
    /// The provider says the code or the refresh token is no good (`invalid_grant`): the
    /// grant is gone.
    InvalidGrant,
    /// Anything else: the provider could not be reached, or answered another error.
    Failed(String),
}

/// The HTTP half of the flow, on a client the kernel does not link.
pub trait OAuthFlow: Send + Sync {
    /// Where to send the user to sign in for `client`, coming back to `redirect_uri` with
    /// `state`; and the PKCE verifier to keep for the exchange.
    fn authorize(
        &self,
        client: &OAuthClient,
        redirect_uri: &str,
        state: &str,
    ) -> Result<(String, String), String>;

    /// The tokens `code` is worth, with the PKCE `verifier` of its sign-in.
    fn exchange<'a>(
        &'a self,
        client: &'a OAuthClient,
        redirect_uri: &'a str,
        code: &'a str,
        verifier: &'a str,
    ) -> BoxFuture<'a, Result<Tokens, FlowError>>;

    /// New tokens for `refresh_token`.
    fn refresh<'a>(
        &'a self,
        client: &'a OAuthClient,
        refresh_token: &'a str,
    ) -> BoxFuture<'a, Result<Tokens, FlowError>>;
}

/// A sign-in under way: who it is for, and, once the browser started it, the verifier.
#[derive(Serialize, Deserialize)]
struct Pending {
    agent: String,
    subscriber: String,
    /// The provider, as `<namespace>:<id>`.
    provider: String,
    /// The PKCE verifier and the link it was started from, once the link was opened.
    started: Option<(String, String)>,
}

/// Why the callback keeps nothing: for the browser's page, never holding a secret.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CallbackError {
    /// The link or the sign-in is unknown, used or expired.
    #[error("this sign-in link is unknown, already used or expired: ask for a new one")]
    Unknown,
    /// The callback came to a browser other than the one that started the sign-in.
    #[error("this sign-in was started in another browser: open the link again here")]
    OtherBrowser,
    /// The provider refused (the user said no, or the code is no good).
    #[error("the provider refused the sign-in: {0}")]
    Refused(String),
    /// The agent or its client is gone, or the store failed.
    #[error("the sign-in could not be completed: {0}")]
    Failed(String),
}

/// Where the browser goes, and the cookie that binds the sign-in to it.
#[derive(Debug)]
pub struct Started {
    /// The provider's sign-in page.
    pub redirect: String,
    /// The sign-in's `state`.
    pub state: String,
    /// The `Set-Cookie` value that binds it to this browser: named for the sign-in (two
    /// at once do not clash), HttpOnly, SameSite=Lax, for the engine's `/oauth` path and
    /// the link's lifetime, Secure when `public_url` is https.
    pub cookie: String,
}

/// The name of the cookie that binds the sign-in `state` to its browser.
pub fn cookie_name(state: &str) -> String {
    format!("engine_oauth_{state}")
}

/// Whether `text` is an id this broker made (128 bits as lowercase hex): anything else is
/// refused before the store is asked.
fn is_id(text: &str) -> bool {
    text.len() == 32
        && text
            .bytes()
            .all(|byte| matches!(byte, b'0'..=b'9' | b'a'..=b'f'))
}

/// The broker: its store, key and flow, and where browsers reach the engine.
pub struct Broker {
    store: Arc<dyn GrantStore>,
    key: SealKey,
    flow: Arc<dyn OAuthFlow>,
    public_url: String,
    connect_ttl: Duration,
    /// One refresh of a grant at a time in this process: a provider that rotates refresh
    /// tokens takes the first and refuses a second made with the same token.
    refreshing: Mutex<HashMap<GrantKey, Arc<tokio::sync::Mutex<()>>>>,
}

impl std::fmt::Debug for Broker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Broker")
            .field("public_url", &self.public_url)
            .finish_non_exhaustive()
    }
}

/// A new unguessable id: 128 random bits, as hex.
fn random_id() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the system has randomness");
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

impl Broker {
    /// A broker for `config`, when an agent has an OAuth client: its key `key`, else
    /// from the environment variable `[oauth] key_env` names. `Err` says what is missing.
    pub fn for_config(
        config: &EngineConfig,
        store: Arc<dyn GrantStore>,
        flow: Arc<dyn OAuthFlow>,
        key: Option<SealKey>,
    ) -> Result<Self, String> {
        let oauth = &config.oauth;
        let public_url = oauth
            .public_url
            .clone()
            .ok_or("`[oauth] public_url` is not set")?;
        let key = match key {
            Some(key) => key,
            None => {
                let text = std::env::var(&oauth.key_env).map_err(|_| {
                    format!(
                        "the environment variable `{}` (`[oauth] key_env`) is not set: give it 64 hex digits (`openssl rand -hex 32`), the key OAuth tokens are sealed with",
                        oauth.key_env
                    )
                })?;
                SealKey::from_hex(&text)
                    .map_err(|problem| format!("`{}` {problem}", oauth.key_env))?
            }
        };
        Ok(Self {
            store,
            key,
            flow,
            public_url,
            connect_ttl: Duration::from_secs(oauth.connect_ttl_secs),
            refreshing: Mutex::default(),
        })
    }

    fn redirect_uri(&self) -> String {
        format!("{}{CALLBACK_PATH}", self.public_url)
    }

    fn expires_at(&self) -> i64 {
        now_secs().saturating_add(i64::try_from(self.connect_ttl.as_secs()).unwrap_or(i64::MAX))
    }

    /// A valid access token of `key`'s grant for `client`: the one kept, or a refreshed
    /// one when it expired; a link to connect when there is none, or the provider says
    /// the grant is gone.
    pub(crate) async fn token(
        &self,
        key: &GrantKey,
        client: &OAuthClient,
    ) -> Result<Tokens, OAuthError> {
        let lock = Arc::clone(self.locks().entry(key.clone()).or_default());
        let answer = {
            let _one_at_a_time = lock.lock().await;
            self.token_held(key, client).await
        };
        // The entry goes with its last user: a map of every subscriber ever seen would grow.
        let mut locks = self.locks();
        if Arc::strong_count(&lock) == 2 {
            locks.remove(key);
        }
        answer
    }

    fn locks(&self) -> std::sync::MutexGuard<'_, HashMap<GrantKey, Arc<tokio::sync::Mutex<()>>>> {
        self.refreshing
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The tokens of `key`'s grant, sealed as `sealed`, if they open.
    fn opened(&self, key: &GrantKey, sealed: &[u8]) -> Option<Tokens> {
        self.key
            .open(&key.bound(), sealed)
            .and_then(|plain| serde_json::from_slice(&plain).ok())
    }

    async fn token_held(&self, key: &GrantKey, client: &OAuthClient) -> Result<Tokens, OAuthError> {
        let unavailable = |error: GrantStoreError| OAuthError::Unavailable(error.to_string());
        let kept = self.store.grant(key).await.map_err(unavailable)?;
        // A grant sealed with another key (the key changed) is as good as none.
        let Some((sealed, tokens)) = kept.and_then(|sealed| {
            let tokens = self.opened(key, &sealed)?;
            Some((sealed, tokens))
        }) else {
            return Err(self.connect_link(key).await);
        };
        if fresh(&tokens) {
            return Ok(tokens);
        }
        let Some(refresh_token) = &tokens.refresh_token else {
            self.store.delete_grant(key).await.map_err(unavailable)?;
            return Err(self.connect_link(key).await);
        };
        match self.flow.refresh(client, refresh_token).await {
            Ok(mut refreshed) => {
                // A provider that does not rotate refresh tokens answers none: keep ours.
                if refreshed.refresh_token.is_none() {
                    refreshed.refresh_token = Some(refresh_token.clone());
                }
                self.keep(key, &refreshed).await.map_err(unavailable)?;
                Ok(refreshed)
            }
            Err(FlowError::InvalidGrant) => {
                // Another process may have refreshed first, spending the refresh token
                // this one sent: its grant is good, and stays.
                let now = self.store.grant(key).await.map_err(unavailable)?;
                if let Some(theirs) = now.filter(|now| *now != sealed) {
                    if let Some(tokens) = self.opened(key, &theirs).filter(fresh) {
                        return Ok(tokens);
                    }
                }
                tracing::info!(
                    agent = key.agent,
                    provider = key.provider,
                    "the provider revoked an OAuth grant: it is forgotten"
                );
                self.store.delete_grant(key).await.map_err(unavailable)?;
                Err(self.connect_link(key).await)
            }
            Err(FlowError::Failed(why)) => Err(OAuthError::Unavailable(why)),
        }
    }

    /// Forgets `key`'s grant.
    pub(crate) async fn forget(&self, key: &GrantKey) -> Result<(), OAuthError> {
        self.store
            .delete_grant(key)
            .await
            .map(drop)
            .map_err(|error| OAuthError::Unavailable(error.to_string()))
    }

    async fn keep(&self, key: &GrantKey, tokens: &Tokens) -> Result<(), GrantStoreError> {
        let plain = serde_json::to_vec(tokens).expect("tokens serialize");
        self.store
            .put_grant(key, self.key.seal(&key.bound(), &plain))
            .await
    }

    /// A new connect link for `key`, as the error a tool hands the model.
    async fn connect_link(&self, key: &GrantKey) -> OAuthError {
        let id = random_id();
        let pending = Pending {
            agent: key.agent.clone(),
            subscriber: key.subscriber.clone(),
            provider: key.provider.clone(),
            started: None,
        };
        match self.put_pending(&format!("link:{id}"), &pending).await {
            Ok(()) => OAuthError::NotConnected {
                provider: key.provider.clone(),
                connect_url: format!("{}{CONNECT_PATH}{id}", self.public_url),
            },
            Err(error) => OAuthError::Unavailable(error.to_string()),
        }
    }

    async fn put_pending(&self, id: &str, pending: &Pending) -> Result<(), GrantStoreError> {
        let plain = serde_json::to_vec(pending).expect("a sign-in serializes");
        let sealed = self.key.seal(&format!("pending\0{id}"), &plain);
        self.store.put_pending(id, sealed, self.expires_at()).await
    }

    async fn take_pending(&self, id: &str) -> Result<Option<Pending>, GrantStoreError> {
        let sealed = self.store.take_pending(id).await?;
        Ok(self.open_pending(id, sealed))
    }

    fn open_pending(&self, id: &str, sealed: Option<Vec<u8>>) -> Option<Pending> {
        sealed
            .and_then(|sealed| self.key.open(&format!("pending\0{id}"), &sealed))
            .and_then(|plain| serde_json::from_slice(&plain).ok())
    }

    /// Starts a sign-in from the connect link `id`: where to send the browser, and the
    /// cookie that binds the sign-in to it. The link stays good until a sign-in from it
    /// completes or it expires: a link previewer that opens it spends nothing. `client`
    /// finds the agent's client for the provider.
    pub async fn start(
        &self,
        id: &str,
        client: impl FnOnce(&str, &str) -> Option<OAuthClient>,
    ) -> Result<Started, CallbackError> {
        let failed = |error: GrantStoreError| CallbackError::Failed(error.to_string());
        if !is_id(id) {
            return Err(CallbackError::Unknown);
        }
        let link = format!("link:{id}");
        let sealed = self.store.pending(&link).await.map_err(failed)?;
        let mut pending = self
            .open_pending(&link, sealed)
            .ok_or(CallbackError::Unknown)?;
        let client = client(&pending.agent, &pending.provider).ok_or_else(|| {
            CallbackError::Failed("the agent no longer has a client for this provider".into())
        })?;
        let state = random_id();
        let (redirect, verifier) = self
            .flow
            .authorize(&client, &self.redirect_uri(), &state)
            .map_err(CallbackError::Failed)?;
        pending.started = Some((verifier, id.to_owned()));
        self.put_pending(&format!("state:{state}"), &pending)
            .await
            .map_err(failed)?;
        let path = url::Url::parse(&self.public_url)
            .map(|url| url.path().trim_end_matches('/').to_owned())
            .unwrap_or_default();
        let secure = if self.public_url.starts_with("https://") {
            "; Secure"
        } else {
            ""
        };
        let cookie = format!(
            "{}={state}; Path={path}/oauth; HttpOnly; SameSite=Lax; Max-Age={}{secure}",
            cookie_name(&state),
            self.connect_ttl.as_secs()
        );
        Ok(Started {
            redirect,
            state,
            cookie,
        })
    }

    /// Completes a sign-in: `state` as the provider sent it back, `cookie` as the browser
    /// holds the sign-in's cookie, and the `code`. The sign-in is taken first, so a code
    /// comes in once; its link is spent once the grant is kept.
    pub async fn callback(
        &self,
        state: &str,
        cookie: Option<&str>,
        code: &str,
        client: impl FnOnce(&str, &str) -> Option<OAuthClient>,
    ) -> Result<GrantKey, CallbackError> {
        if !is_id(state) {
            return Err(CallbackError::Unknown);
        }
        // Compared before anything is taken: a request forged from another site (which
        // carries no cookie of this sign-in) spends nothing.
        if !cookie.is_some_and(|cookie| constant_time_eq(cookie.as_bytes(), state.as_bytes())) {
            return Err(CallbackError::OtherBrowser);
        }
        let failed = |error: GrantStoreError| CallbackError::Failed(error.to_string());
        let pending = self
            .take_pending(&format!("state:{state}"))
            .await
            .map_err(failed)?
            .ok_or(CallbackError::Unknown)?;
        let (verifier, link) = pending.started.ok_or(CallbackError::Unknown)?;
        let client = client(&pending.agent, &pending.provider).ok_or_else(|| {
            CallbackError::Failed("the agent no longer has a client for this provider".into())
        })?;
        let tokens = self
            .flow
            .exchange(&client, &self.redirect_uri(), code, &verifier)
            .await
            .map_err(|error| match error {
                FlowError::InvalidGrant => CallbackError::Refused("the code is no good".into()),
                FlowError::Failed(why) => CallbackError::Refused(why),
            })?;
        let key = GrantKey {
            agent: pending.agent,
            subscriber: pending.subscriber,
            provider: pending.provider,
        };
        self.keep(&key, &tokens).await.map_err(failed)?;
        // Connected: the link is spent (a second sign-in from it would replace this one).
        self.store
            .take_pending(&format!("link:{link}"))
            .await
            .map_err(failed)?;
        Ok(key)
    }
}

/// Whether `tokens` hold an access token that is not about to expire.
fn fresh(tokens: &Tokens) -> bool {
    tokens
        .expires_at
        .is_none_or(|at| at - EXPIRY_SKEW_SECS > now_secs())
}

/// Whether `a` and `b` are equal, in a time that does not tell where they differ.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}
