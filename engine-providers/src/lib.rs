//! The engine's model providers over HTTP and its tools' model gateway: reqwest with
//! rustls on ring (HTTPS to hosted providers, plain HTTP to local ones), one client and
//! its connection pool for both. Give them to an engine with [`backends`].

mod gateway;
mod http;
mod oauth;

use std::sync::Arc;

use engine_core::config::{GatewayConfig, ProviderConfig};
use engine_core::model::{GatewayError, ModelGateway};
use engine_core::oauth::OAuthFlow;
use engine_core::provider::{Provider, ProviderError};
use engine_core::Backends;

pub use gateway::OpenAiCompatibleGateway;
pub use http::{install_tls_provider, shared_client, HttpProvider};
pub use oauth::OAuth2Flow;

/// `backends` with providers, the gateway and the OAuth flow over HTTP, and rustls's
/// crypto provider installed before any plugin code runs (a plugin's own reqwest client
/// needs it too).
pub fn backends(backends: Backends) -> Backends {
    backends.with_http(
        install_tls_provider,
        open_provider,
        open_gateway,
        open_oauth_flow,
    )
}

/// The OAuth flow's requests, on a client of their own (no redirects followed).
pub fn open_oauth_flow() -> Arc<dyn OAuthFlow> {
    Arc::new(OAuth2Flow::default())
}

/// The provider `described` says, with `api_key`, on the engine's client.
pub fn open_provider(
    described: &ProviderConfig,
    api_key: Option<&str>,
) -> Result<Arc<dyn Provider>, ProviderError> {
    Ok(Arc::new(HttpProvider::new(
        described,
        api_key,
        shared_client(),
    )?))
}

/// The model gateway `described` says.
pub fn open_gateway(described: &GatewayConfig) -> Result<Arc<dyn ModelGateway>, GatewayError> {
    Ok(Arc::new(OpenAiCompatibleGateway::new(described)?))
}
