//! OAuth for tools, by example: the plugin declares the provider its tools use; each
//! agent's operator gives it a client (`[agents.<agent>.oauth."calendar:acme"]`); a tool
//! takes `&OAuth` and asks for the user's token. For a user who has not connected, the
//! tool's error holds a link to connect, which the model passes on. The provider's API
//! answers `GET <api_url>/api/me` with `{"user": "..."}` for the bearer token (as the
//! test provider, `examples/engine/tests/oauth/authorization_server.py`, does); the
//! engine needs `ENGINE_OAUTH_KEY` (see `plugin-sdk/docs/oauth.md`).
//!
//! ```toml
//! [oauth]
//! public_url = "https://engine.example.com"
//!
//! [agents.assistant.oauth."calendar:acme"]
//! client_id = "engine"
//! client_secret = "acme_client_secret"       # ENGINE_SECRET__assistant__acme_client_secret
//!
//! [agents.assistant.plugins.calendar]
//! api_url = "https://api.acme.example"
//! ```

use plugin_sdk::prelude::*;
use serde::Deserialize;

plugin_sdk::plugin! {
    namespace = "calendar",
    engine = ">=0.1, <2",
    state = Calendar,
    display_name = "Calendar",
    description = {
        "en-US": "Reads the user's calendar at their provider, with their consent.",
        "it-IT": "Legge il calendario dell'utente presso il suo fornitore, con il suo consenso.",
    },
    oauth = {
        acme = {
            authorize_url = "https://accounts.acme.example/oauth/authorize",
            token_url = "https://accounts.acme.example/oauth/token",
            scopes = ["profile", "calendar.read"],
        },
    },
}

/// The plugin's settings: where the provider's API is.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CalendarSettings {
    /// The API's base URL.
    pub api_url: String,
}

/// The API client the tools share.
pub struct Calendar {
    me: String,
    http: reqwest::Client,
}

impl PluginState for Calendar {
    type Settings = CalendarSettings;

    fn build(settings: CalendarSettings) -> Result<Self, String> {
        let base = settings.api_url.trim_end_matches('/');
        // The user's token goes there: over TLS, or to this machine (a test's provider).
        let parsed = reqwest::Url::parse(base).ok();
        let safe = parsed.as_ref().is_some_and(|url| {
            url.username().is_empty()
                && (url.scheme() == "https"
                    || (url.scheme() == "http"
                        && matches!(url.host_str(), Some("127.0.0.1" | "localhost" | "[::1]"))))
        });
        if !safe {
            return Err(format!(
                "`api_url` is `{}`: give an https:// URL (or http:// on a loopback address, for a test's provider)",
                settings.api_url
            ));
        }
        Ok(Self {
            me: format!("{base}/api/me"),
            http: reqwest::Client::new(),
        })
    }
}

/// What the provider says of the user.
#[derive(Deserialize)]
struct Me {
    user: String,
}

/// Nothing to give: the user is the conversation's.
#[derive(Deserialize, JsonSchema, ToolArgs)]
pub struct NoArguments {}

/// Who the user is at their calendar provider. When they have not connected it yet, the
/// answer is a link for them to connect it: give it to them as it is.
#[define_tool(
    summary = { "en-US": "Who the user is at their calendar provider.", "it-IT": "Chi è l'utente presso il suo fornitore di calendario." },
    read_only
)]
pub async fn whoami(
    _arguments: NoArguments,
    oauth: &OAuth,
    calendar: Shared<Calendar>,
) -> Result<String, ToolError> {
    let token = oauth.token("acme").await?;
    let response = calendar
        .http
        .get(&calendar.me)
        .header("authorization", token.bearer())
        .send()
        .await?;
    if response.status() == reqwest::StatusCode::UNAUTHORIZED {
        // The provider no longer takes it: forget it, so the next call asks to connect.
        oauth.forget("acme").await?;
        return Err(ToolError::new(
            "the calendar provider refused the user's token: call this tool again for a link to connect",
        ));
    }
    let me: Me = response.error_for_status()?.json().await?;
    Ok(me.user)
}
