//! The engine's answers to what a running session call asks: each from the call's own
//! context, built as a linked tool's would be, through the same extractors, so a session
//! reaches nothing a linked tool of the same declaration could not.

use base64::Engine as _;
use plugin_dev_wire::{Answer, Question};
use plugin_sdk::artifacts::{Artifact, ArtifactError, ArtifactHandle, Artifacts};
use plugin_sdk::audit::Audit;
use plugin_sdk::engine::{CallInput, ToolParam};
use plugin_sdk::history::{History, HistoryError};
use plugin_sdk::knowledge::{Knowledge, KnowledgeLevel, Level, Manage, Read, Write};
use plugin_sdk::model::{Model, ModelError};
use plugin_sdk::ToolContext;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};

use plugin_dev_wire::MAX_FRAME_BYTES;

/// What the engine answers one session call with: its context.
pub struct DevServe {
    context: ToolContext,
}

impl std::fmt::Debug for DevServe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DevServe").finish_non_exhaustive()
    }
}

/// The largest artifact a frame carries: base64 takes 4 bytes for 3, and the frame's
/// JSON, file name and MIME type (each at most the store's name limit) fit in the rest.
const FRAME_ARTIFACT_BYTES: usize = (MAX_FRAME_BYTES - 8 * 1024) / 4 * 3;

impl DevServe {
    pub(crate) fn new(context: ToolContext) -> Self {
        Self { context }
    }

    /// Writes an audit record the call made, through the call's logger (the engine's
    /// redactor, the tool and the subscriber). The knowledge base's records are the
    /// engine's own, written as it answers: the session's copies are dropped.
    pub fn audit(&self, event: &str, detail: &str) {
        if event.starts_with("knowledge.") {
            return;
        }
        let Some(audit) = self.extract::<&Audit>() else {
            return;
        };
        match serde_json::from_str::<Box<RawValue>>(detail) {
            Ok(detail) => audit.record(event, detail),
            Err(_) => audit.record(event, detail),
        }
    }

    /// The answer to `question`.
    pub async fn answer(&self, question: Question) -> Answer {
        match question {
            Question::PutArtifact {
                filename,
                mime,
                base64,
                ttl_ms,
            } => {
                let Some(artifacts) = self.extract::<&Artifacts>() else {
                    return not_granted("the conversation's artifacts");
                };
                let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(base64) else {
                    return refused("invalid", "the artifact's bytes are not base64".to_owned());
                };
                let put = match ttl_ms {
                    Some(ms) => {
                        let ttl = std::time::Duration::from_millis(ms);
                        artifacts.put_for(ttl, bytes, filename, mime).await
                    }
                    None => artifacts.put(bytes, filename, mime).await,
                };
                match put {
                    Ok(handle) => ok(handle.as_str()),
                    Err(error) => artifact_refusal(&error),
                }
            }
            Question::TakeArtifact { handle } => {
                let Some(artifacts) = self.extract::<&Artifacts>() else {
                    return not_granted("the conversation's artifacts");
                };
                let handle = ArtifactHandle::new(handle);
                match artifacts.take_within(&handle, FRAME_ARTIFACT_BYTES).await {
                    Ok(None) => ok(Value::Null),
                    Ok(Some(artifact)) => taken(artifact),
                    Err(error) => artifact_refusal(&error),
                }
            }
            Question::Chat { request } => {
                let Some(model) = self.extract::<Option<Model>>().flatten() else {
                    return not_granted("model access");
                };
                match model.chat(request).await {
                    Ok(reply) => ok(reply.text),
                    Err(error) => {
                        let kind = match error {
                            ModelError::SpendCapReached { .. } => "spend_cap",
                            ModelError::TimedOut => "timed_out",
                            ModelError::Cancelled => "cancelled",
                            _ => "gateway",
                        };
                        refused(kind, error.to_string())
                    }
                }
            }
            Question::Search {
                level,
                query,
                limit,
            } => {
                self.knowledge(
                    level,
                    |kb| async move { ok(kb.search(&query, limit).await) },
                )
                .await
            }
            Question::GetDocument { level, id } => {
                self.knowledge(level, |kb| async move {
                    match kb.get(id).await {
                        Ok(document) => ok(document),
                        Err(error) => refused("store", error.to_string()),
                    }
                })
                .await
            }
            Question::ListDocuments {
                level,
                limit,
                after,
            } => {
                self.knowledge(level, |kb| async move {
                    match kb.list(limit, after.as_ref()).await {
                        Ok(documents) => ok(documents),
                        Err(error) => refused("store", error.to_string()),
                    }
                })
                .await
            }
            Question::WriteDocument {
                level,
                filename,
                content,
            } => match level {
                KnowledgeLevel::Read => not_granted("writing to the knowledge base"),
                KnowledgeLevel::Write => match self.extract::<Option<Knowledge<Write>>>().flatten()
                {
                    Some(kb) => ok(kb.write(&filename, &content).await),
                    None => not_granted("the knowledge base at `write`"),
                },
                KnowledgeLevel::Manage => {
                    match self.extract::<Option<Knowledge<Manage>>>().flatten() {
                        Some(kb) => ok(kb.write(&filename, &content).await),
                        None => not_granted("the knowledge base at `manage`"),
                    }
                }
            },
            Question::RecentMessages { options } => {
                let Some(history) = self.extract::<History>() else {
                    return not_granted("the conversation's history");
                };
                match history.recent(options).await {
                    Ok(page) => ok(page),
                    Err(error @ HistoryError::Limit { .. }) => refused("limit", error.to_string()),
                    Err(error) => refused("unavailable", error.to_string()),
                }
            }
            Question::DeleteDocument { level, id } => match level {
                KnowledgeLevel::Read => not_granted("deleting from the knowledge base"),
                KnowledgeLevel::Write => match self.extract::<Option<Knowledge<Write>>>().flatten()
                {
                    Some(kb) => ok(kb.delete(id).await),
                    None => not_granted("the knowledge base at `write`"),
                },
                KnowledgeLevel::Manage => {
                    match self.extract::<Option<Knowledge<Manage>>>().flatten() {
                        Some(kb) => ok(kb.delete(id).await),
                        None => not_granted("the knowledge base at `manage`"),
                    }
                }
            },
        }
    }

    /// Answers a read of the knowledge base at `level` with `read`, run on a handle of
    /// that level when the call is granted it.
    async fn knowledge<F, Fut>(&self, level: KnowledgeLevel, read: F) -> Answer
    where
        F: FnOnce(Knowledge<Read>) -> Fut,
        Fut: std::future::Future<Output = Answer>,
    {
        let handle = match level {
            KnowledgeLevel::Read => self.at::<Read>(),
            KnowledgeLevel::Write => self.at::<Write>().and_then(|kb| kb.at_level::<Read>()),
            KnowledgeLevel::Manage => self.at::<Manage>().and_then(|kb| kb.at_level::<Read>()),
        };
        match handle {
            Some(kb) => read(kb).await,
            None => not_granted(&format!("the knowledge base at `{}`", level.as_str())),
        }
    }

    fn at<L: Level>(&self) -> Option<Knowledge<L>> {
        self.extract::<Option<Knowledge<L>>>().flatten()
    }

    /// What the extractor `P` gives from the call's context, as a linked tool's
    /// parameter would be given it; `None` where it would refuse.
    fn extract<'a, P: ToolParam>(&'a self) -> Option<P::Extracted<'a>> {
        P::extract(&CallInput::new("", &self.context)).ok()
    }
}

fn ok(value: impl Serialize) -> Answer {
    Answer::Ok(serde_json::to_value(value).expect("the context's answers serialize"))
}

fn refused(kind: &str, message: String) -> Answer {
    Answer::Refused {
        kind: kind.to_owned(),
        message,
    }
}

fn not_granted(what: &str) -> Answer {
    refused(
        "not_granted",
        format!("this call is not granted {what}: the tool does not declare it, or the agent does not grant it"),
    )
}

fn artifact_refusal(error: &ArtifactError) -> Answer {
    let kind = match error {
        ArtifactError::TooLarge { .. } => "too_large",
        ArtifactError::NameTooLong { .. } => "name_too_long",
        ArtifactError::StoreFull => "store_full",
        _ => "unavailable",
    };
    refused(kind, error.to_string())
}

/// A taken artifact as an answer.
fn taken(artifact: Artifact) -> Answer {
    ok(json!({
        "filename": artifact.filename,
        "mime": artifact.mime,
        "base64": base64::engine::general_purpose::STANDARD.encode(&artifact.bytes),
    }))
}
