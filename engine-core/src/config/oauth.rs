//! `[oauth]` and `[agents.<agent>.oauth."<namespace>:<id>"]`: where the broker is reached,
//! the key its tokens are sealed with, and each agent's client for a plugin's provider.

use serde::Deserialize;

/// The broker `engine serve` runs for the OAuth providers plugins declare.
///
/// ```toml
/// [oauth]
/// public_url = "https://engine.example.com"   # the callback is <public_url>/oauth/callback
/// key_env = "ENGINE_OAUTH_KEY"                # 32 bytes as 64 hex digits: `openssl rand -hex 32`
/// connect_ttl_secs = 600                      # how long a connect link works
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OAuthConfig {
    /// Where a browser reaches this engine; the redirect URI each provider's client is
    /// registered with is `<public_url>/oauth/callback`.
    pub public_url: Option<String>,
    /// The environment variable that holds the key tokens are sealed with at rest
    /// (ChaCha20-Poly1305): 64 hex digits.
    pub key_env: String,
    /// How long a connect link, and the sign-in it starts, works, in seconds.
    pub connect_ttl_secs: u64,
}

impl Default for OAuthConfig {
    fn default() -> Self {
        Self {
            public_url: None,
            key_env: "ENGINE_OAUTH_KEY".to_owned(),
            connect_ttl_secs: 600,
        }
    }
}

/// An agent's client for one provider a plugin declares, keyed `"<namespace>:<id>"`.
///
/// ```toml
/// [agents.assistant.oauth."calendar:google"]
/// client_id = "1234.apps.example.com"
/// client_secret = "google_client_secret"   # the key of one of the agent's secrets
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OAuthClientConfig {
    /// The client's id, as the provider registered it.
    pub client_id: String,
    /// The key of the agent's secret that holds the client's secret: set it in the
    /// environment (`ENGINE_SECRET__<agent>__<key>`), never in this file's values.
    pub client_secret: String,
    /// The provider's authorization endpoint, instead of the plugin's: https, or http on a
    /// loopback address (a test's provider).
    #[serde(default)]
    pub authorize_url: Option<String>,
    /// The provider's token endpoint, instead of the plugin's, as `authorize_url`.
    #[serde(default)]
    pub token_url: Option<String>,
}

/// The longest a connect link may work.
pub const MAX_CONNECT_TTL_SECS: u64 = 24 * 60 * 60;

/// Whether `url` is https, or http on a loopback address: where codes and tokens may go.
pub(crate) fn is_endpoint(url: &str) -> bool {
    let Ok(parsed) = url::Url::parse(url) else {
        return false;
    };
    let loopback = matches!(parsed.host(), Some(url::Host::Domain("localhost")))
        || matches!(parsed.host(), Some(url::Host::Ipv4(ip)) if ip.is_loopback())
        || matches!(parsed.host(), Some(url::Host::Ipv6(ip)) if ip.is_loopback());
    parsed.username().is_empty()
        && parsed.password().is_none()
        && (parsed.scheme() == "https" || (parsed.scheme() == "http" && loopback))
}
