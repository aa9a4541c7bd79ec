//! Where data is kept and how much: `[database]`, `[artifacts]`, `[knowledge]`, `[state]`.

use std::time::Duration;

use serde::Deserialize;

/// The PostgreSQL database that several replicas of an engine share: conversations (their
/// messages, turns, state and staged actions) and artifacts are kept there, so a
/// conversation's turns may land on any replica.
///
/// ```toml
/// [database]
/// url = "postgres://engine@db.internal:5432/engine"  # no password here: see password_env
/// password_env = "ENGINE_DATABASE_PASSWORD"          # the default
/// max_connections = 16                               # per replica, and again for turns' locks
/// timeout_ms = 5000                                  # the most one store operation waits
/// sweep_secs = 30                                    # how often dead replicas' turns are settled
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct DatabaseConfig {
    /// `postgres://user@host:port/database`, without a password.
    pub url: String,
    /// The environment variable that holds the password (none: no password is sent).
    #[serde(default = "DatabaseConfig::default_password_env")]
    pub password_env: String,
    /// The most connections one replica opens for store operations; and, in a pool of
    /// their own, the most turns of conversations it runs at once (each holds a
    /// connection for its conversation's lock; more wait up to `timeout_ms`). A replica
    /// opens up to twice this many.
    #[serde(default = "DatabaseConfig::default_max_connections")]
    pub max_connections: usize,
    /// The most one store operation waits for the database, in milliseconds (a call's
    /// or turn's deadline may cut it sooner): a slow database fails the operation with a
    /// clear error instead of holding the caller.
    #[serde(default = "DatabaseConfig::default_timeout_ms")]
    pub timeout_ms: u64,
    /// How often, in seconds, each replica records the turns stopped replicas left (in
    /// conversations no turn or reader came back to) interrupted, and their actions
    /// under way unknown.
    #[serde(default = "DatabaseConfig::default_sweep_secs")]
    pub sweep_secs: u64,
}

impl DatabaseConfig {
    fn default_password_env() -> String {
        "ENGINE_DATABASE_PASSWORD".to_owned()
    }

    fn default_max_connections() -> usize {
        16
    }

    fn default_timeout_ms() -> u64 {
        5000
    }

    fn default_sweep_secs() -> u64 {
        30
    }

    /// The bound on one store operation.
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms)
    }
}

/// Limits of the artifact store. Everything an artifact holds counts toward the
/// capacity: its bytes, its filename, its MIME type, its conversation's id and a fixed
/// overhead, so that empty artifacts cannot fill memory either.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(default)]
pub struct ArtifactLimits {
    /// The largest artifact, in bytes.
    pub max_bytes: usize,
    /// The longest filename, and the longest MIME type, in bytes.
    pub max_name_bytes: usize,
    /// All artifacts together, in bytes, as counted above.
    pub capacity_bytes: usize,
    /// How long an artifact lives at most, in seconds.
    pub ttl_secs: u64,
}

impl Default for ArtifactLimits {
    fn default() -> Self {
        Self {
            max_bytes: 10 << 20,
            max_name_bytes: 255,
            capacity_bytes: 256 << 20,
            ttl_secs: 15 * 60,
        }
    }
}

impl ArtifactLimits {
    /// The longest an artifact lives.
    pub fn ttl(&self) -> Duration {
        Duration::from_secs(self.ttl_secs)
    }
}

/// What the turn route and channels accept as files sent with a message: each is kept as
/// an artifact of the conversation (so it is also under `[artifacts]`), and the model is
/// told of it.
///
/// ```toml
/// [attachments]
/// max_bytes = 2097152     # each file; artifacts.max_bytes when that is smaller
/// max_count = 4           # files with one message
/// media_types = ["text/plain", "image/png", "image/*"]   # what is accepted
/// ```
///
/// The turn route's body is at most 4 MiB, and base64 takes 4 bytes for 3: files sent
/// there together are under 3 MiB, whatever these say.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default)]
pub struct AttachmentLimits {
    /// The largest file, in bytes.
    pub max_bytes: usize,
    /// The most files one message brings.
    pub max_count: usize,
    /// The media types accepted, exactly (`application/pdf`) or by their type
    /// (`image/*`).
    pub media_types: Vec<String>,
}

impl Default for AttachmentLimits {
    fn default() -> Self {
        Self {
            max_bytes: 2 << 20,
            max_count: 4,
            media_types: [
                "text/plain",
                "text/markdown",
                "text/csv",
                "application/json",
                "application/pdf",
                "image/png",
                "image/jpeg",
                "image/gif",
                "image/webp",
            ]
            .map(str::to_owned)
            .to_vec(),
        }
    }
}

/// Whether `text` is a media type in lower case (`application/pdf`), or, with `*` as its
/// subtype, a range of them (`image/*`): what `[attachments] media_types` holds.
pub(crate) fn is_media_range(text: &str) -> bool {
    match text.split_once('/') {
        Some((kind, "*")) => is_token(kind),
        Some((kind, subtype)) => is_token(kind) && is_token(subtype),
        None => false,
    }
}

/// An RFC 6838 name, in lower case.
fn is_token(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 127
        && text.bytes().all(|byte| {
            byte.is_ascii_lowercase() || byte.is_ascii_digit() || b"!#$&-^_.+".contains(&byte)
        })
}

/// Limits of the knowledge base.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(default)]
pub struct KnowledgeLimits {
    /// The largest document, in bytes.
    pub max_document_bytes: usize,
    /// The longest filename, in bytes.
    pub max_filename_bytes: usize,
    /// The most documents an agent's knowledge base holds.
    pub max_documents: usize,
    /// The most distinct words a search looks for; a longer query is refused, naming
    /// this limit.
    pub max_search_words: usize,
    /// How many SQLite connections serve calls at once (at least one); each busy one
    /// holds a thread of the blocking pool.
    pub connections: usize,
    /// How long a call waits for a database another process holds locked, in
    /// milliseconds, before it fails saying so.
    pub busy_timeout_ms: u64,
}

impl Default for KnowledgeLimits {
    fn default() -> Self {
        Self {
            max_document_bytes: 1 << 20,
            max_filename_bytes: 255,
            max_documents: 10_000,
            max_search_words: 32,
            connections: 4,
            busy_timeout_ms: 5_000,
        }
    }
}

impl KnowledgeLimits {
    /// How long a call waits for a locked database.
    pub fn busy_timeout(&self) -> Duration {
        Duration::from_millis(self.busy_timeout_ms)
    }
}

/// Limits of conversation state, kept in memory. A call whose writes would break one
/// fails, and none of its writes is applied.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(default)]
pub struct StateLimits {
    /// The most keys a conversation's state holds.
    pub max_keys: usize,
    /// The largest value, as JSON, in bytes.
    pub max_value_bytes: usize,
    /// A conversation's keys and values together, in bytes.
    pub max_conversation_bytes: usize,
    /// Every conversation's state together, in bytes.
    pub capacity_bytes: usize,
    /// How long a conversation's state outlives its last call, in seconds; then all of
    /// it is dropped.
    pub idle_secs: u64,
}

impl Default for StateLimits {
    fn default() -> Self {
        Self {
            max_keys: 256,
            max_value_bytes: 64 << 10,
            max_conversation_bytes: 1 << 20,
            capacity_bytes: 256 << 20,
            idle_secs: 24 * 60 * 60,
        }
    }
}

impl StateLimits {
    /// How long an idle conversation's state is kept.
    pub fn idle(&self) -> Duration {
        Duration::from_secs(self.idle_secs)
    }
}
