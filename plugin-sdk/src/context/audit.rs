//! The audit logger: structured events through `tracing`, with secrets redacted.

use std::borrow::Cow;
use std::sync::Arc;

use serde::Serialize;

use super::redact::{Redact, RedactValues};

/// The audit logger of a call: take it as `audit: &Audit`.
///
/// Each event goes to `tracing` (target `audit`) with the plugin, the tool and the
/// subscriber, and every secret value the engine knows is redacted from it, wherever it
/// appears: in the event's name or in any field of its detail.
///
/// A plugin cannot make one: the engine builds it for each call, with the engine's
/// redactor (for engines, the `engine` feature has `Audit::new`).
#[derive(Clone)]
pub struct Audit {
    engine: Option<Arc<dyn Redact>>,
    /// The call's own secrets, redacted even without an engine's redactor.
    own: RedactValues,
    /// The tool's id; shared, since the engine builds an `Audit` for every call.
    source: Option<Arc<str>>,
    subscriber: Option<String>,
    /// Where records go instead of `tracing`: an engine on the other side of a dev
    /// bridge, which redacts and writes them.
    sink: Option<Arc<dyn AuditSink>>,
}

/// Where an [`Audit`] sends its records instead of writing them itself: for a process
/// that runs a plugin's code away from the engine (dev mode), whose engine writes them.
pub trait AuditSink: Send + Sync {
    /// Takes `event` with `detail` (JSON text), both already redacted of the call's own
    /// secrets.
    fn record(&self, event: &str, detail: &str);
}

impl Audit {
    /// A logger that knows no secret, no tool and no subscriber.
    pub(crate) const EMPTY: Audit = Audit {
        engine: None,
        own: RedactValues::EMPTY,
        source: None,
        subscriber: None,
        sink: None,
    };

    /// The logger of the tool `source` (its id), redacting with `redact`; for engines.
    #[cfg(feature = "engine")]
    pub fn new(redact: Arc<dyn Redact>, source: Arc<str>) -> Self {
        Self {
            engine: Some(redact),
            source: Some(source),
            ..Self::EMPTY
        }
    }

    /// A logger that hands every record to `sink`, redacted of the call's own secrets;
    /// for a dev bridge's side of the author's process, whose engine writes them.
    #[cfg(feature = "engine")]
    pub fn forwarding(sink: Arc<dyn AuditSink>) -> Self {
        Self {
            sink: Some(sink),
            ..Self::EMPTY
        }
    }

    /// A logger for a plugin's unit tests: it records to `tracing` as the engine's does,
    /// redacting nothing but what [`ToolContext::with_secret`](crate::ToolContext::with_secret)
    /// gives the context it is put in. Behind the `engine` feature, which a plugin names
    /// in its dev-dependencies only, so that no plugin builds an unredacted logger.
    #[cfg(feature = "engine")]
    pub fn for_tests() -> Self {
        Self::EMPTY
    }

    pub(crate) fn redact_too(&mut self, value: &str) {
        self.own.push(value);
    }

    /// Takes over what `other` learned before it was replaced: its own secrets and the
    /// subscriber.
    pub(crate) fn absorb(&mut self, other: Audit) {
        for value in other.own.secrets() {
            self.own.push(value);
        }
        if self.subscriber.is_none() {
            self.subscriber = other.subscriber;
        }
    }

    pub(crate) fn for_subscriber(&mut self, subscriber: &str) {
        self.subscriber = Some(subscriber.to_owned());
    }

    /// Records `event` with `detail` (any serializable value, logged as JSON).
    pub fn record(&self, event: &str, detail: impl Serialize) {
        let detail = serde_json::to_string(&detail)
            .unwrap_or_else(|error| format!("\"(detail not serializable: {error})\""));
        let event = self.clean(event);
        let detail = self.clean(&detail);
        if let Some(sink) = &self.sink {
            return sink.record(&event, &detail);
        }
        tracing::info!(
            target: "audit",
            source = self.source.as_deref().unwrap_or("-"),
            subscriber = self.subscriber.as_deref().unwrap_or("-"),
            event = %event,
            detail = %detail,
        );
    }

    fn clean<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let text = match &self.engine {
            Some(engine) => engine.redact(text),
            None => Cow::Borrowed(text),
        };
        match self.own.redact(&text) {
            Cow::Borrowed(_) => text,
            Cow::Owned(cleaned) => Cow::Owned(cleaned),
        }
    }
}

/// The call's redaction (its audit logger's), for an engine that redacts what else the
/// call gives back: a tool's output, when the call was handed secrets while it ran.
#[cfg(feature = "engine")]
pub(crate) struct CallRedactor<'a>(pub(crate) &'a Audit);

#[cfg(feature = "engine")]
impl Redact for CallRedactor<'_> {
    fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        self.0.clean(text)
    }
}

impl std::fmt::Debug for Audit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Audit")
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}
