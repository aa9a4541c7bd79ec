//! The broker as one call sees it: the calling plugin's providers, for the call's agent
//! and subscriber, and the tokens it handed out, which the call's redactor then knows.

use std::borrow::Cow;
use std::sync::{Arc, Mutex};

use plugin_sdk::engine::{BoxFuture, OAuthBroker, PluginManifest, Redact, RedactValues};
use plugin_sdk::oauth::{AccessToken, OAuthError};

use super::{Broker, GrantKey, OAuthClient};
use crate::agent::Agent;

/// The tokens a call was handed, redacted with the agent's secrets from what the call
/// gives back (its output, its audit records).
pub(crate) struct CallRedaction {
    agent: Arc<RedactValues>,
    issued: Mutex<RedactValues>,
}

impl CallRedaction {
    pub(crate) fn new(agent: Arc<RedactValues>) -> Self {
        Self {
            agent,
            issued: Mutex::default(),
        }
    }

    fn issued(&self) -> std::sync::MutexGuard<'_, RedactValues> {
        self.issued
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Redact for CallRedaction {
    fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let text = self.agent.redact(text);
        match self.issued().redact(&text) {
            Cow::Borrowed(_) => text,
            Cow::Owned(cleaned) => Cow::Owned(cleaned),
        }
    }
}

/// One call's broker.
pub(crate) struct CallBroker {
    pub(crate) broker: Arc<Broker>,
    pub(crate) agent: Arc<Agent>,
    pub(crate) plugin: &'static PluginManifest,
    /// Whose grants, as `<channel>/<subscriber>`; `None` for a turn without a subscriber
    /// of its own, which has none.
    pub(crate) subscriber: Option<String>,
    pub(crate) redaction: Arc<CallRedaction>,
}

impl CallBroker {
    fn client(&self, id: &str) -> Result<(GrantKey, OAuthClient), OAuthError> {
        let client = OAuthClient::of(self.agent.config(), self.plugin, id)?;
        let subscriber = self.subscriber.clone().ok_or(OAuthError::NoSubscriber)?;
        let key = GrantKey {
            agent: self.agent.name().to_owned(),
            subscriber,
            provider: client.provider.clone(),
        };
        Ok((key, client))
    }
}

impl OAuthBroker for CallBroker {
    fn token<'a>(&'a self, provider: &'a str) -> BoxFuture<'a, Result<AccessToken, OAuthError>> {
        Box::pin(async move {
            let (key, client) = self.client(provider)?;
            let tokens = self.broker.token(&key, &client).await?;
            let mut issued = self.redaction.issued();
            issued.push(&tokens.access_token);
            if let Some(refresh) = &tokens.refresh_token {
                issued.push(refresh);
            }
            Ok(AccessToken::new(tokens.access_token))
        })
    }

    fn forget<'a>(&'a self, provider: &'a str) -> BoxFuture<'a, Result<(), OAuthError>> {
        Box::pin(async move {
            let (key, _) = self.client(provider)?;
            self.broker.forget(&key).await
        })
    }
}
