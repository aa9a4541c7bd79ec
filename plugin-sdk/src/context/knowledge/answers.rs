//! What the knowledge base answers: documents, their summaries, search hits, and why a
//! call was refused or failed.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::ToolError;

/// What kind of writer made a document; [`Document::origin_ref`] says which one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// A plugin's tool: the reference is the plugin's namespace.
    Plugin,
    /// A person who runs the engine (`engine knowledge upload`): the reference is the
    /// name they gave.
    Operator,
}

impl Origin {
    /// Its name, as stored and serialized (`plugin`, `operator`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Plugin => "plugin",
            Self::Operator => "operator",
        }
    }

    /// The origin named `name`, as [`as_str`](Self::as_str) gives it.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "plugin" => Some(Self::Plugin),
            "operator" => Some(Self::Operator),
            _ => None,
        }
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A stored document.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Document {
    /// The store's id for it.
    pub id: i64,
    /// Its name, unique within the agent's knowledge base.
    pub filename: String,
    /// Its text.
    pub content: String,
    /// What kind of writer made it, as the engine records it.
    pub origin: Origin,
    /// Which one: a plugin's namespace, or the name an operator gave.
    pub origin_ref: String,
}

/// A document in a listing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocumentSummary {
    /// The store's id for it.
    pub id: i64,
    /// Its name.
    pub filename: String,
    /// What kind of writer made it.
    pub origin: Origin,
    /// Which one.
    pub origin_ref: String,
    /// Its size, in bytes.
    pub size: usize,
}

/// Where a listing goes on: the last name of the page before. Documents are listed by
/// name, so a document written or deleted between two pages moves no other.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ListCursor(String);

impl ListCursor {
    /// The cursor after the document named `filename`; for stores.
    pub fn after(filename: impl Into<String>) -> Self {
        Self(filename.into())
    }

    /// The name the next page starts after; for stores.
    pub fn filename(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ListCursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A page of a listing: the documents by name, and the cursor for the next page when
/// there may be one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Listing {
    /// The documents, by name.
    pub documents: Vec<DocumentSummary>,
    /// Where the next page starts, or `None` after the last.
    pub next: Option<ListCursor>,
}

impl Listing {
    /// The page of at most `limit` documents from `fetched`, which a store read by name
    /// asking for one more than `limit`: when that one came, there is a next page.
    pub fn page(mut fetched: Vec<DocumentSummary>, limit: usize) -> Self {
        let next = (fetched.len() > limit)
            .then(|| {
                fetched.truncate(limit);
                fetched.last().map(|last| ListCursor::after(&last.filename))
            })
            .flatten();
        Self {
            documents: fetched,
            next,
        }
    }
}

/// A search result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SearchHit {
    /// The document's id.
    pub id: i64,
    /// Its name.
    pub filename: String,
    /// The matching passage.
    pub snippet: String,
}

/// Why a mutation was not done. Hand it back to the model: it is an answer, not a crash.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "reason")]
pub enum Refusal {
    /// The agent does not grant what this needs.
    NotGranted,
    /// The document was written by someone else, and the level is below manage.
    NotOwned,
    /// No such document.
    NotFound,
    /// The content is larger than the store accepts.
    TooLarge {
        /// Its size, in bytes.
        size: usize,
        /// The most the store accepts.
        limit: usize,
    },
    /// The filename is longer than the store accepts.
    NameTooLong {
        /// Its length, in bytes.
        size: usize,
        /// The longest the store accepts, in bytes.
        limit: usize,
    },
    /// The agent's knowledge base holds as many documents as it may.
    LimitReached {
        /// The most it may hold.
        limit: usize,
    },
    /// The store could not be reached; nothing was changed.
    Unavailable,
    /// The store does not do this operation at all (a store of an engine's own may leave
    /// some out); nothing was changed.
    Unsupported,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotGranted => f.write_str("not granted"),
            Self::NotOwned => f.write_str("not owned: another plugin or a person wrote it"),
            Self::NotFound => f.write_str("not found"),
            Self::TooLarge { size, limit } => {
                write!(f, "too large: {size} bytes, at most {limit}")
            }
            Self::NameTooLong { size, limit } => {
                write!(f, "filename too long: {size} bytes, at most {limit}")
            }
            Self::LimitReached { limit } => write!(f, "limit reached: {limit} documents"),
            Self::Unavailable => f.write_str("the knowledge base is unavailable"),
            Self::Unsupported => f.write_str("the knowledge store does not do this"),
        }
    }
}

/// A mutation's answer: the document (after the change) or why nothing changed.
pub type Mutation = Result<Written, Refusal>;

/// A document a mutation wrote (or deleted).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Written {
    /// The document.
    pub document: Document,
    /// Whether a write created it (rather than updating it).
    pub created: bool,
}

/// A read that failed because the store could not answer: not the same as "not found".
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KnowledgeError(pub String);

impl fmt::Display for KnowledgeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the knowledge base could not answer: {}", self.0)
    }
}

impl std::error::Error for KnowledgeError {}

/// Why a search answered no hits.
///
/// Not a `std::error::Error`, on purpose: that lets `?` in a tool turn it into the
/// right [`ToolError`] (a query the store refuses is the model's to fix, so it reads as
/// invalid arguments), which the blanket conversion of errors could not.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SearchError {
    /// The query has more distinct words than the store searches at once.
    TooManyWords {
        /// The distinct words in the query.
        words: usize,
        /// The most the store searches for.
        limit: usize,
    },
    /// The query is longer than the store searches at once.
    QueryTooLong {
        /// The query's length in bytes.
        bytes: usize,
        /// The most the store searches for.
        limit: usize,
    },
    /// A word of the query is longer than the store searches for: the store's index may
    /// split it into many terms, each a step of the search that nothing interrupts.
    WordTooLong {
        /// The word's length in characters.
        chars: usize,
        /// The longest word the store searches for.
        limit: usize,
    },
    /// The store could not answer.
    Store(KnowledgeError),
}

impl fmt::Display for SearchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooManyWords { words, limit } => write!(
                f,
                "the query has {words} distinct words and a search takes at most {limit}: search again with the few words that matter most"
            ),
            Self::QueryTooLong { bytes, limit } => write!(
                f,
                "the query is {bytes} bytes and a search takes at most {limit}: search again with the few words that matter most"
            ),
            Self::WordTooLong { chars, limit } => write!(
                f,
                "the query has a word of {chars} characters and a search takes words of at most {limit}: search again with shorter words"
            ),
            Self::Store(error) => error.fmt(f),
        }
    }
}

impl From<KnowledgeError> for SearchError {
    fn from(error: KnowledgeError) -> Self {
        Self::Store(error)
    }
}

impl From<SearchError> for ToolError {
    fn from(error: SearchError) -> Self {
        match error {
            SearchError::TooManyWords { .. }
            | SearchError::QueryTooLong { .. }
            | SearchError::WordTooLong { .. } => ToolError::invalid_arguments(error.to_string()),
            SearchError::Store(error) => error.into(),
        }
    }
}
