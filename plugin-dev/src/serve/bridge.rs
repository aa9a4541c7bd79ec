//! The context a call reaches through the engine: each store a tool is handed is a
//! question sent over the session, answered by the engine with the call's own grants.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use plugin_sdk::artifacts::{Artifact, ArtifactError, ArtifactHandle};
use plugin_sdk::engine::{ArtifactStore, AuditSink, BoxFuture, KnowledgeStore, ModelAccess, Scope};
use plugin_sdk::history::{HistoryError, HistoryPage, HistorySource, RecentMessages};
use plugin_sdk::knowledge::{
    Document, KnowledgeError, ListCursor, Listing, Mutation, Refusal, SearchError, SearchHit,
};
use plugin_sdk::model::{ChatReply, ChatRequest, ModelError};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use crate::wire::{Answer, Question, ToEngine, MAX_FRAME_BYTES};

/// The questions waiting for an answer on one connection, by call and question.
pub(super) type Pending = Arc<Mutex<HashMap<(u64, u64), oneshot::Sender<Answer>>>>;

/// Asks the engine on behalf of one call.
#[derive(Clone)]
pub(super) struct Asker {
    call: u64,
    next: Arc<AtomicU64>,
    out: mpsc::UnboundedSender<String>,
    pending: Pending,
}

/// Why a question got no answer.
enum Unanswered {
    /// The engine refused: its kind and message.
    Refused(String, String),
    /// The question would not fit in a frame, or the session ended.
    Bridge(String),
}

const DISCONNECTED: &str = "the development session disconnected";

impl Asker {
    pub(super) fn new(call: u64, out: mpsc::UnboundedSender<String>, pending: Pending) -> Self {
        Self {
            call,
            next: Arc::default(),
            out,
            pending,
        }
    }

    /// Sends `question` and waits for its answer.
    async fn ask<T: DeserializeOwned>(&self, question: Question) -> Result<T, Unanswered> {
        let ask = self.next.fetch_add(1, Ordering::Relaxed);
        let frame = ToEngine::Ask {
            call: self.call,
            ask,
            question,
        };
        let text = serde_json::to_string(&frame).expect("a frame always serializes");
        if text.len() > MAX_FRAME_BYTES {
            return Err(Unanswered::Bridge(format!(
                "the request is {} bytes as a frame, and a development session carries at most {MAX_FRAME_BYTES}",
                text.len()
            )));
        }
        let (answer, answered) = oneshot::channel();
        self.pending
            .lock()
            .expect("the pending map is never poisoned")
            .insert((self.call, ask), answer);
        if self.out.send(text).is_err() {
            self.forget(ask);
            return Err(Unanswered::Bridge(DISCONNECTED.to_owned()));
        }
        // The call's future is dropped at the engine's deadline or cancellation: the
        // question is then forgotten with it.
        let forget = Forget(self, ask);
        let answer = answered.await;
        drop(forget);
        match answer {
            Ok(Answer::Ok(value)) => serde_json::from_value(value).map_err(|error| {
                Unanswered::Bridge(format!("the engine's answer did not parse: {error}"))
            }),
            Ok(Answer::Refused { kind, message }) => Err(Unanswered::Refused(kind, message)),
            Err(_) => Err(Unanswered::Bridge(DISCONNECTED.to_owned())),
        }
    }

    fn forget(&self, ask: u64) {
        self.pending
            .lock()
            .expect("the pending map is never poisoned")
            .remove(&(self.call, ask));
    }
}

/// Forgets a question when its wait ends, answered or dropped.
struct Forget<'a>(&'a Asker, u64);

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        self.0.forget(self.1);
    }
}

impl Unanswered {
    fn message(self) -> String {
        match self {
            Self::Refused(_, message) | Self::Bridge(message) => message,
        }
    }
}

/// The conversation's artifacts, kept by the engine.
pub(super) struct BridgeArtifacts(pub(super) Asker);

impl ArtifactStore for BridgeArtifacts {
    fn put<'a>(
        &'a self,
        _conversation: &'a str,
        artifact: Artifact,
        ttl: Option<Duration>,
    ) -> BoxFuture<'a, Result<ArtifactHandle, ArtifactError>> {
        Box::pin(async move {
            let question = Question::PutArtifact {
                filename: artifact.filename,
                mime: artifact.mime,
                base64: base64::engine::general_purpose::STANDARD.encode(&artifact.bytes),
                ttl_ms: ttl.map(|ttl| u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX)),
            };
            let handle: String = self.0.ask(question).await.map_err(artifact_error)?;
            Ok(ArtifactHandle::new(handle))
        })
    }

    fn take<'a>(
        &'a self,
        _conversation: &'a str,
        handle: &'a ArtifactHandle,
    ) -> BoxFuture<'a, Result<Option<Artifact>, ArtifactError>> {
        Box::pin(async move {
            let question = Question::TakeArtifact {
                handle: handle.as_str().to_owned(),
            };
            let taken: Option<Value> = self.0.ask(question).await.map_err(artifact_error)?;
            let Some(taken) = taken else { return Ok(None) };
            let field = |name: &str| taken.get(name).and_then(Value::as_str).unwrap_or_default();
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(field("base64"))
                .map_err(|error| ArtifactError::Unavailable(error.to_string()))?;
            Ok(Some(Artifact {
                bytes,
                filename: field("filename").to_owned(),
                mime: field("mime").to_owned(),
            }))
        })
    }

    /// The engine takes an artifact only if it fits a frame: this side has no other bound.
    fn take_within<'a>(
        &'a self,
        conversation: &'a str,
        handle: &'a ArtifactHandle,
        _max_bytes: usize,
    ) -> BoxFuture<'a, Result<Option<Artifact>, ArtifactError>> {
        self.take(conversation, handle)
    }
}

/// An artifact refusal as the tool's API spells it.
fn artifact_error(unanswered: Unanswered) -> ArtifactError {
    match unanswered {
        Unanswered::Refused(kind, _) if kind == "store_full" => ArtifactError::StoreFull,
        unanswered => ArtifactError::Unavailable(unanswered.message()),
    }
}

/// Audit records, written by the engine.
pub(super) struct BridgeAudit(pub(super) Asker);

impl AuditSink for BridgeAudit {
    fn record(&self, event: &str, detail: &str) {
        let frame = ToEngine::Audit {
            call: self.0.call,
            event: event.to_owned(),
            detail: detail.to_owned(),
        };
        let text = serde_json::to_string(&frame).expect("a frame always serializes");
        if text.len() > MAX_FRAME_BYTES {
            tracing::warn!(event, "an audit record too large for a frame was not sent");
            return;
        }
        // A session that ended takes no record; nor would a call it could not answer.
        let _ = self.0.out.send(text);
    }
}

/// The agent's model, through the engine's gateway and caps.
pub(super) struct BridgeModel(pub(super) Asker);

impl ModelAccess for BridgeModel {
    fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatReply, ModelError>> {
        Box::pin(async move {
            let text: String = self.0.ask(Question::Chat { request }).await.map_err(
                |unanswered| match unanswered {
                    Unanswered::Refused(kind, _) if kind == "timed_out" => ModelError::TimedOut,
                    Unanswered::Refused(kind, _) if kind == "cancelled" => ModelError::Cancelled,
                    unanswered => ModelError::Gateway(unanswered.message()),
                },
            )?;
            Ok(ChatReply { text })
        })
    }
}

/// The conversation's history, read by the engine.
pub(super) struct BridgeHistory(pub(super) Asker);

impl HistorySource for BridgeHistory {
    fn recent(&self, options: RecentMessages) -> BoxFuture<'_, Result<HistoryPage, HistoryError>> {
        Box::pin(async move {
            self.0
                .ask(Question::RecentMessages { options })
                .await
                .map_err(|unanswered| HistoryError::Unavailable(unanswered.message()))
        })
    }
}

/// The agent's knowledge base, at the level the engine grants the call.
pub(super) struct BridgeKnowledge(pub(super) Asker);

impl KnowledgeStore for BridgeKnowledge {
    fn search<'a>(
        &'a self,
        scope: &'a Scope,
        query: &'a str,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<SearchHit>, SearchError>> {
        Box::pin(async move {
            let question = Question::Search {
                level: scope.level,
                query: query.to_owned(),
                limit,
            };
            let answer: Result<Vec<SearchHit>, SearchError> =
                self.0.ask(question).await.map_err(|unanswered| {
                    SearchError::Store(KnowledgeError(unanswered.message()))
                })?;
            answer
        })
    }

    fn get<'a>(
        &'a self,
        scope: &'a Scope,
        id: i64,
    ) -> BoxFuture<'a, Result<Option<Document>, KnowledgeError>> {
        Box::pin(async move {
            let question = Question::GetDocument {
                level: scope.level,
                id,
            };
            self.0
                .ask(question)
                .await
                .map_err(|unanswered| KnowledgeError(unanswered.message()))
        })
    }

    fn list<'a>(
        &'a self,
        scope: &'a Scope,
        limit: usize,
        after: Option<&'a ListCursor>,
    ) -> BoxFuture<'a, Result<Listing, KnowledgeError>> {
        Box::pin(async move {
            let question = Question::ListDocuments {
                level: scope.level,
                limit,
                after: after.cloned(),
            };
            self.0
                .ask(question)
                .await
                .map_err(|unanswered| KnowledgeError(unanswered.message()))
        })
    }

    fn write<'a>(
        &'a self,
        scope: &'a Scope,
        filename: &'a str,
        content: &'a str,
    ) -> BoxFuture<'a, Mutation> {
        Box::pin(async move {
            let question = Question::WriteDocument {
                level: scope.level,
                filename: filename.to_owned(),
                content: content.to_owned(),
            };
            self.0
                .ask(question)
                .await
                .unwrap_or(Err(Refusal::Unavailable))
        })
    }

    fn delete<'a>(&'a self, scope: &'a Scope, id: i64) -> BoxFuture<'a, Mutation> {
        Box::pin(async move {
            let question = Question::DeleteDocument {
                level: scope.level,
                id,
            };
            self.0
                .ask(question)
                .await
                .unwrap_or(Err(Refusal::Unavailable))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_artifact_too_large_for_a_frame_is_refused_before_it_is_sent() {
        let (out, mut sent) = mpsc::unbounded_channel();
        let asker = Asker::new(1, out, Pending::default());
        let store = BridgeArtifacts(asker);
        let artifact = Artifact {
            bytes: vec![0; MAX_FRAME_BYTES],
            filename: "big.bin".into(),
            mime: "application/octet-stream".into(),
        };
        let refused = store.put("c1", artifact, None).await.unwrap_err();
        assert!(
            refused
                .to_string()
                .contains("a development session carries at most"),
            "{refused}"
        );
        assert!(sent.try_recv().is_err(), "nothing went out");
    }
}
