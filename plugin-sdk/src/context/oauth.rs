//! OAuth 2 for tools (seed 003's `ctx.oauth`): the providers a plugin declares in
//! `plugin!`, and the subscriber's access token for one, which the engine's broker keeps,
//! refreshes and hands to the tool; never to the model.

use std::fmt;
use std::sync::Arc;

use crate::BoxFuture;

/// An OAuth 2 provider a plugin's tools use, as `plugin! { oauth = { ... } }` declares it:
/// checked at compile time (an id of 1 to 32 lowercase letters, digits and `_`, a letter
/// first; https URLs; scopes each once, without spaces). The operator gives each agent its client (`[agents.<agent>.oauth]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OAuthProvider {
    /// Its id within the plugin (`google`); the engine names it `<namespace>:<id>`.
    pub id: &'static str,
    /// Where the user is sent to grant access.
    pub authorize_url: &'static str,
    /// Where codes and refresh tokens are exchanged for tokens.
    pub token_url: &'static str,
    /// The scopes asked for.
    pub scopes: &'static [&'static str],
}

/// An access token for a provider's API. Its text is for the `Authorization` header of
/// the tool's own requests: the engine redacts it from the call's output and audit
/// records, and `Debug` does not show it.
#[derive(Clone, PartialEq, Eq)]
pub struct AccessToken(String);

impl AccessToken {
    /// A token of `text`; for engines.
    pub fn new(text: impl Into<String>) -> Self {
        Self(text.into())
    }

    /// The token's text.
    pub fn secret(&self) -> &str {
        &self.0
    }

    /// `Bearer <token>`, for an `Authorization` header.
    pub fn bearer(&self) -> String {
        format!("Bearer {}", self.0)
    }
}

impl fmt::Debug for AccessToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AccessToken([REDACTED])")
    }
}

/// Why there is no token: each is an answer the model can act on, through `?` into a
/// [`ToolError`](crate::ToolError) whose message says it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum OAuthError {
    /// The subscriber has not connected the provider, or the provider revoked the grant:
    /// hand them `connect_url` ("connect your calendar at ...").
    NotConnected {
        /// The provider, as `<namespace>:<id>`.
        provider: String,
        /// Where the subscriber connects it, once, for a few minutes.
        connect_url: String,
    },
    /// The plugin declares no provider of this id.
    Undeclared {
        /// The id asked for.
        provider: String,
    },
    /// The agent has no client for the provider (`[agents.<agent>.oauth]`).
    NotConfigured {
        /// The provider, as `<namespace>:<id>`.
        provider: String,
    },
    /// The turn names no subscriber of its own (the turn route without `subscriber`):
    /// grants are a subscriber's.
    NoSubscriber,
    /// The engine could not ask the provider or its store; try again later.
    Unavailable(String),
}

impl fmt::Display for OAuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotConnected {
                provider,
                connect_url,
            } => write!(
                f,
                "the user has not connected `{provider}`: ask them to connect it at {connect_url} and then try again"
            ),
            Self::Undeclared { provider } => write!(
                f,
                "the plugin declares no OAuth provider `{provider}` (`plugin! {{ oauth = {{ ... }} }}`)"
            ),
            Self::NotConfigured { provider } => write!(
                f,
                "the agent has no OAuth client for `{provider}`: its operator configures one"
            ),
            Self::NoSubscriber => f.write_str(
                "the conversation names no user of its own, and OAuth grants are a user's: the caller gives a `subscriber`",
            ),
            Self::Unavailable(why) => write!(f, "the OAuth broker is unavailable ({why}); try again later"),
        }
    }
}

impl std::error::Error for OAuthError {}

/// The engine's broker, for one call: the calling plugin's providers, for the call's
/// agent and subscriber. Implemented by the engine; a tool reaches it through [`OAuth`].
pub trait OAuthBroker: Send + Sync {
    /// A valid access token for `provider` (refreshed when it expired), or why not.
    fn token<'a>(&'a self, provider: &'a str) -> BoxFuture<'a, Result<AccessToken, OAuthError>>;

    /// Forgets the subscriber's grant of `provider`: for a tool whose request the provider
    /// refused the token of (`401`), so that the next call asks the user to connect again.
    fn forget<'a>(&'a self, provider: &'a str) -> BoxFuture<'a, Result<(), OAuthError>>;
}

/// The subscriber's OAuth grants for the plugin's providers: take `oauth: &OAuth`.
///
/// A tool that takes it is offered in a conversation (tokens are the subscriber's), and
/// only by an agent that configures a client for a provider the plugin declares.
///
/// ```
/// # use plugin_sdk::prelude::*;
/// # plugin_sdk::plugin! {
/// #     namespace = "calendar",
/// #     engine = ">=0.1",
/// #     oauth = { google = { authorize_url = "https://accounts.example.com/auth", token_url = "https://accounts.example.com/token", scopes = ["calendar.read"] } },
/// # }
/// # #[derive(Deserialize, JsonSchema, ToolArgs)]
/// # struct Day {
/// #     /// The day, as YYYY-MM-DD.
/// #     day: String,
/// # }
/// /// The user's events of a day.
/// #[define_tool]
/// async fn events(day: Day, oauth: &OAuth) -> Result<String, ToolError> {
///     // Not connected: the error's message holds the link, for the model to hand on.
///     let token = oauth.token("google").await?;
///     let _authorization = token.bearer(); // for the provider's API
///     Ok(format!("events of {}", day.day))
/// }
/// # fn main() {}
/// ```
#[derive(Clone)]
pub struct OAuth {
    broker: Arc<dyn OAuthBroker>,
}

impl OAuth {
    /// The grants `broker` keeps; for engines.
    pub fn new(broker: Arc<dyn OAuthBroker>) -> Self {
        Self { broker }
    }

    /// A valid access token for `provider` (an id the plugin declares), or why not.
    pub async fn token(&self, provider: &str) -> Result<AccessToken, OAuthError> {
        self.broker.token(provider).await
    }

    /// Forgets the subscriber's grant of `provider`, after the provider refused its
    /// token: the next [`token`](Self::token) answers [`OAuthError::NotConnected`].
    pub async fn forget(&self, provider: &str) -> Result<(), OAuthError> {
        self.broker.forget(provider).await
    }
}

impl fmt::Debug for OAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuth").finish_non_exhaustive()
    }
}
