//! Artifacts: bytes one tool hands to another in the same conversation, by handle.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::BoxFuture;

/// The handle `put` answers: an unguessable id to return to the model and take later.
#[derive(Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct ArtifactHandle(String);

impl ArtifactHandle {
    /// A handle from its text; for stores.
    pub fn new(text: impl Into<String>) -> Self {
        Self(text.into())
    }

    /// The handle's text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ArtifactHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ArtifactHandle({})", self.0)
    }
}

/// A file: its bytes, its name and its MIME type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Artifact {
    /// The content.
    pub bytes: Vec<u8>,
    /// A file name, such as `quote.pdf`.
    pub filename: String,
    /// A MIME type, such as `application/pdf`.
    pub mime: String,
}

/// Why `put` refused an artifact.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArtifactError {
    /// The artifact is larger than the engine accepts.
    TooLarge {
        /// Its size, in bytes.
        size: usize,
        /// The most the engine accepts, in bytes.
        limit: usize,
    },
    /// The filename or the MIME type is longer than the engine accepts.
    NameTooLong {
        /// Which: `filename` or `MIME type`.
        what: &'static str,
        /// Its length, in bytes.
        size: usize,
        /// The longest the engine accepts, in bytes.
        limit: usize,
    },
    /// The store is full; try again later or hand over less.
    StoreFull,
    /// The store could not be reached (a shared database that is down or slow); try
    /// again later.
    Unavailable(String),
}

impl fmt::Display for ArtifactError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooLarge { size, limit } => write!(
                f,
                "the artifact is {size} bytes, and the engine accepts at most {limit}"
            ),
            Self::NameTooLong { what, size, limit } => write!(
                f,
                "the artifact's {what} is {size} bytes, and the engine accepts at most {limit}"
            ),
            Self::StoreFull => f.write_str("the artifact store is full; try again later"),
            Self::Unavailable(why) => {
                write!(
                    f,
                    "the artifact store is unavailable ({why}); try again later"
                )
            }
        }
    }
}

impl std::error::Error for ArtifactError {}

/// Where the engine keeps artifacts. Implemented by the engine; a tool reaches it only
/// through [`Artifacts`], bound to the call's conversation.
pub trait ArtifactStore: Send + Sync {
    /// Keeps `artifact` for `conversation`, for at most `ttl` (the store caps it). Any
    /// `ttl` is accepted, however large.
    fn put<'a>(
        &'a self,
        conversation: &'a str,
        artifact: Artifact,
        ttl: Option<Duration>,
    ) -> BoxFuture<'a, Result<ArtifactHandle, ArtifactError>>;

    /// The artifact of `handle`, once, if it was put in `conversation` and has not
    /// expired; `None` in every other case, whatever the reason. An error only when the
    /// store could not be asked.
    fn take<'a>(
        &'a self,
        conversation: &'a str,
        handle: &'a ArtifactHandle,
    ) -> BoxFuture<'a, Result<Option<Artifact>, ArtifactError>>;

    /// As [`take`](Self::take), but an artifact of more than `max_bytes` bytes is left in
    /// place and refused as [`ArtifactError::TooLarge`]: for an engine that hands the
    /// artifact on through a channel with a bound of its own (a dev session's frame).
    fn take_within<'a>(
        &'a self,
        conversation: &'a str,
        handle: &'a ArtifactHandle,
        max_bytes: usize,
    ) -> BoxFuture<'a, Result<Option<Artifact>, ArtifactError>>;
}

/// The artifacts of the call's conversation: take it as `artifacts: &Artifacts`.
#[derive(Clone)]
pub struct Artifacts {
    store: Arc<dyn ArtifactStore>,
    conversation: String,
}

impl Artifacts {
    /// The artifacts of `conversation` in `store`; for engines.
    pub fn new(store: Arc<dyn ArtifactStore>, conversation: impl Into<String>) -> Self {
        Self {
            store,
            conversation: conversation.into(),
        }
    }

    /// Keeps `bytes` as `filename` of type `mime` for the engine's lifetime of an
    /// artifact, and answers the handle to pass on. Fails over the engine's limits (size,
    /// name and type lengths) or when the store is full.
    pub async fn put(
        &self,
        bytes: Vec<u8>,
        filename: impl Into<String>,
        mime: impl Into<String>,
    ) -> Result<ArtifactHandle, ArtifactError> {
        self.put_artifact(bytes, filename.into(), mime.into(), None)
            .await
    }

    /// As [`put`](Self::put), kept for `ttl` at most: the engine caps it at its own
    /// lifetime of an artifact (the seed's `ttlMs`). For a handle that is only worth
    /// taking soon, such as a preview.
    pub async fn put_for(
        &self,
        ttl: Duration,
        bytes: Vec<u8>,
        filename: impl Into<String>,
        mime: impl Into<String>,
    ) -> Result<ArtifactHandle, ArtifactError> {
        self.put_artifact(bytes, filename.into(), mime.into(), Some(ttl))
            .await
    }

    async fn put_artifact(
        &self,
        bytes: Vec<u8>,
        filename: String,
        mime: String,
        ttl: Option<Duration>,
    ) -> Result<ArtifactHandle, ArtifactError> {
        let artifact = Artifact {
            bytes,
            filename,
            mime,
        };
        self.store.put(&self.conversation, artifact, ttl).await
    }

    /// Takes the artifact of `handle`: once, in this conversation, before it expires,
    /// whichever replica of the engine put it. `None` does not say why (unknown, taken,
    /// expired or another conversation's); an error says the store could not be asked.
    pub async fn take(&self, handle: &ArtifactHandle) -> Result<Option<Artifact>, ArtifactError> {
        self.store.take(&self.conversation, handle).await
    }

    /// As [`take`](Self::take), leaving an artifact of more than `max_bytes` bytes in
    /// place (refused as [`ArtifactError::TooLarge`]); for engines.
    #[cfg(feature = "engine")]
    pub async fn take_within(
        &self,
        handle: &ArtifactHandle,
        max_bytes: usize,
    ) -> Result<Option<Artifact>, ArtifactError> {
        self.store
            .take_within(&self.conversation, handle, max_bytes)
            .await
    }
}

impl fmt::Debug for Artifacts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Artifacts")
            .field("conversation", &self.conversation)
            .finish_non_exhaustive()
    }
}
