//! The agent's knowledge base, at the level a tool declares in its signature.
//!
//! A tool takes `Knowledge<Read>`, `Knowledge<Write>` or `Knowledge<Manage>` (or the same
//! in an `Option`, to degrade when the agent grants less): the least level it needs. The
//! engine does not equip a tool whose required level the agent does not grant. The
//! handle knows the agent's actual grant, and hands out a higher level when the agent
//! grants it ([`Knowledge::at_level`]), so "read, then write if the agent allows it" is
//! one tool; a write still needs a handle whose type can write. Reads fail on a store
//! error, which is not "not found"; mutations never fail: they answer the document or a
//! [`Refusal`]. No method erases the whole store. Every call is audited, through the
//! call's audit logger (event `knowledge.<method>`), whatever it answers.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::Audit;
use crate::BoxFuture;

mod answers;

pub use answers::{
    Document, DocumentSummary, KnowledgeError, ListCursor, Listing, Mutation, Origin, Refusal,
    SearchError, SearchHit, Written,
};

/// How far a grant goes; each level includes the ones before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KnowledgeLevel {
    /// Search, get and list.
    Read,
    /// Also create documents, and update or delete the ones this plugin wrote.
    Write,
    /// Also update or delete any document.
    Manage,
}

impl KnowledgeLevel {
    /// The level's name, as configured (`read`, `write`, `manage`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Write => "write",
            Self::Manage => "manage",
        }
    }
}

/// A level as a type, for [`Knowledge`]'s parameter.
pub trait Level: sealed::Sealed + Send + Sync + 'static {
    /// The level.
    const LEVEL: KnowledgeLevel;
}

/// A level that may create, update and delete: `Write` and `Manage`. Calling `write` on a
/// `Knowledge<Read>` fails to compile, saying `Read` does not satisfy it.
pub trait CanWrite: Level {}

mod sealed {
    pub trait Sealed {}
}

macro_rules! levels {
    ($($name:ident $(+ $extra:ident)?),*) => {$(
        #[doc = concat!("The `", stringify!($name), "` level, as a type.")]
        #[derive(Debug)]
        pub enum $name {}
        impl sealed::Sealed for $name {}
        impl Level for $name {
            const LEVEL: KnowledgeLevel = KnowledgeLevel::$name;
        }
        $(impl $extra for $name {})?
    )*};
}

levels!(Read, Write + CanWrite, Manage + CanWrite);

/// What a tool's knowledge parameter asks of the agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KnowledgeNeed {
    /// The level the tool's type names.
    pub level: KnowledgeLevel,
    /// `false` for the `Option` form: the tool is equipped anyway, and gets `None`.
    pub required: bool,
}

/// Whose knowledge base a call reaches and with what rights: set by the engine, never by
/// the tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scope {
    /// The agent whose knowledge base it is.
    pub agent: String,
    /// What kind of writer writes.
    pub origin: Origin,
    /// Which one: the calling plugin's namespace, or the operator's name.
    pub origin_ref: String,
    /// The level the tool declared.
    pub level: KnowledgeLevel,
}

impl Scope {
    /// `agent`'s knowledge base as the plugin `namespace` reaches it at `level`.
    pub fn plugin(
        agent: impl Into<String>,
        namespace: impl Into<String>,
        level: KnowledgeLevel,
    ) -> Self {
        Self {
            agent: agent.into(),
            origin: Origin::Plugin,
            origin_ref: namespace.into(),
            level,
        }
    }

    /// `agent`'s knowledge base as an operator named `name` reaches it: at manage.
    pub fn operator(agent: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            agent: agent.into(),
            origin: Origin::Operator,
            origin_ref: name.into(),
            level: KnowledgeLevel::Manage,
        }
    }

    /// Who a document written by `origin` `origin_ref` is after this scope updates it:
    /// an operator's update makes it the operator's (what they upload is theirs, whoever
    /// named a document so first); anyone else's leaves the writer as it was.
    pub fn owner_after_update(&self, origin: Origin, origin_ref: String) -> (Origin, String) {
        match self.origin {
            Origin::Operator => (Origin::Operator, self.origin_ref.clone()),
            Origin::Plugin => (origin, origin_ref),
        }
    }

    /// Whether this scope may change a document written by `origin` `origin_ref`: its
    /// own writer's, or any at manage.
    pub fn may_change(&self, origin: Origin, origin_ref: &str) -> bool {
        self.level >= KnowledgeLevel::Manage
            || (self.level >= KnowledgeLevel::Write
                && origin == self.origin
                && origin_ref == self.origin_ref)
    }
}

/// A knowledge store. Implemented by the engine (the embedded default is SQLite); a tool
/// reaches it only through [`Knowledge`], scoped by the engine.
pub trait KnowledgeStore: Send + Sync {
    /// Documents matching `query` (full-text), best first, at most `limit`; a store may
    /// answer at most a maximum of its own, however large `limit` is.
    ///
    /// A store bounds the work a query makes (a query with too many words, or too long,
    /// is refused), and stops it when the future is dropped: at the call's deadline or
    /// cancellation.
    fn search<'a>(
        &'a self,
        scope: &'a Scope,
        query: &'a str,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<SearchHit>, SearchError>>;

    /// The document `id`, or `None` if there is none.
    fn get<'a>(
        &'a self,
        scope: &'a Scope,
        id: i64,
    ) -> BoxFuture<'a, Result<Option<Document>, KnowledgeError>>;

    /// The documents by name, after `after` when given, at most `limit` (a store may
    /// answer at most a maximum of its own, however large `limit` is), with the cursor of
    /// the next page ([`Listing::page`] makes one from a read of one more).
    fn list<'a>(
        &'a self,
        scope: &'a Scope,
        limit: usize,
        after: Option<&'a ListCursor>,
    ) -> BoxFuture<'a, Result<Listing, KnowledgeError>>;

    /// Creates `filename` with `content`, or updates it where the scope may.
    fn write<'a>(
        &'a self,
        scope: &'a Scope,
        filename: &'a str,
        content: &'a str,
    ) -> BoxFuture<'a, Mutation>;

    /// Deletes the document `id` where the scope may.
    fn delete<'a>(&'a self, scope: &'a Scope, id: i64) -> BoxFuture<'a, Mutation>;

    /// Deletes every document of `agent`, answering how many; for operators (no tool
    /// reaches it). A store that does not implement it answers
    /// [`Refusal::Unsupported`].
    fn wipe<'a>(&'a self, agent: &'a str) -> BoxFuture<'a, Result<usize, Refusal>> {
        let _ = agent;
        Box::pin(async { Err(Refusal::Unsupported) })
    }
}

/// What the engine grants a call: the store and the agent's level.
#[derive(Clone)]
pub struct KnowledgeGrant {
    store: Arc<dyn KnowledgeStore>,
    agent: String,
    namespace: String,
    granted: KnowledgeLevel,
}

impl KnowledgeGrant {
    /// `agent`'s knowledge base in `store`, granted up to `granted`, written to by the
    /// plugin `namespace` (the calling plugin's); for engines.
    pub fn new(
        store: Arc<dyn KnowledgeStore>,
        agent: impl Into<String>,
        namespace: impl Into<String>,
        granted: KnowledgeLevel,
    ) -> Self {
        Self {
            store,
            agent: agent.into(),
            namespace: namespace.into(),
            granted,
        }
    }

    /// The level the agent grants.
    pub fn granted(&self) -> KnowledgeLevel {
        self.granted
    }

    /// The knowledge base at `L`, audited through `audit`, when the agent grants `L`.
    pub(crate) fn at<L: Level>(&self, audit: &Audit) -> Option<Knowledge<L>> {
        (self.granted >= L::LEVEL).then(|| Knowledge {
            store: Arc::clone(&self.store),
            scope: Scope::plugin(self.agent.clone(), self.namespace.clone(), L::LEVEL),
            granted: self.granted,
            audit: audit.clone(),
            level: PhantomData,
        })
    }
}

impl fmt::Debug for KnowledgeGrant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KnowledgeGrant")
            .field("agent", &self.agent)
            .field("granted", &self.granted)
            .finish_non_exhaustive()
    }
}

/// The agent's knowledge base at level `L`: take it as `kb: Knowledge<Read>` (or
/// `Write`, `Manage`), or as `Option<Knowledge<L>>` to degrade without it.
pub struct Knowledge<L: Level> {
    store: Arc<dyn KnowledgeStore>,
    scope: Scope,
    /// What the agent grants: at least `L`.
    granted: KnowledgeLevel,
    /// The call's logger, which records every call.
    audit: Audit,
    level: PhantomData<L>,
}

impl<L: Level> Knowledge<L> {
    /// The level this handle works at.
    pub fn level(&self) -> KnowledgeLevel {
        L::LEVEL
    }

    /// The level the agent grants: at least [`level`](Self::level).
    pub fn granted(&self) -> KnowledgeLevel {
        self.granted
    }

    /// The same knowledge base at level `M`, when the agent grants it: take the least
    /// level the tool needs as its parameter, and ask for more where it would use it.
    ///
    /// ```
    /// # use plugin_sdk::prelude::*;
    /// # use plugin_sdk::knowledge::{Read, Write};
    /// # plugin_sdk::plugin! { namespace = "notes", engine = ">=0.1" }
    /// # #[derive(Deserialize, JsonSchema, ToolArgs)]
    /// # struct Args {
    /// #     /// What to remember.
    /// #     summary: String,
    /// # }
    /// /// Remembers the summary where the agent lets it write, and says whether it did.
    /// #[define_tool]
    /// async fn remember(args: Args, kb: Knowledge<Read>) -> Result<bool, ToolError> {
    ///     let seen = kb.search("invoice", 5).await?;
    ///     let Some(kb) = kb.at_level::<Write>() else {
    ///         return Ok(false); // the agent grants reading only
    ///     };
    ///     let summary = format!("{} (after {} notes)", args.summary, seen.len());
    ///     // A refusal is an answer for the model, not an error of the tool.
    ///     Ok(kb.write("seen-invoices.md", &summary).await.is_ok())
    /// }
    /// # fn main() {}
    /// ```
    pub fn at_level<M: Level>(&self) -> Option<Knowledge<M>> {
        (self.granted >= M::LEVEL).then(|| Knowledge {
            store: Arc::clone(&self.store),
            scope: Scope {
                level: M::LEVEL,
                ..self.scope.clone()
            },
            granted: self.granted,
            audit: self.audit.clone(),
            level: PhantomData,
        })
    }

    /// Documents matching `query`, best first, at most `limit` (and at most the engine's
    /// own maximum). A query with more distinct words than the engine searches at once,
    /// or longer, is refused ([`SearchError::TooManyWords`], [`SearchError::QueryTooLong`],
    /// [`SearchError::WordTooLong`]); `?` hands that to the model as invalid arguments.
    pub async fn search(&self, query: &str, limit: usize) -> Result<Vec<SearchHit>, SearchError> {
        let found = self.store.search(&self.scope, query, limit).await;
        let answer = match &found {
            Ok(hits) => Answer::Count(hits.len()),
            Err(error) => Answer::Failed(error.to_string()),
        };
        self.record("knowledge.search", Call::Search { query, limit }, answer);
        found
    }

    /// The document `id`, or `None` if there is none.
    pub async fn get(&self, id: i64) -> Result<Option<Document>, KnowledgeError> {
        let found = self.store.get(&self.scope, id).await;
        let answer = match &found {
            Ok(document) => Answer::Found(document.is_some()),
            Err(error) => Answer::Failed(error.to_string()),
        };
        self.record("knowledge.get", Call::Document { id }, answer);
        found
    }

    /// The documents by name, at most `limit` (and at most the engine's own maximum,
    /// 1,000), after `after` when given: [`Listing::next`] is where the next page starts.
    ///
    /// ```
    /// # use plugin_sdk::knowledge::{Knowledge, KnowledgeError, Read};
    /// /// Every document's name, a page at a time.
    /// async fn every_name(kb: &Knowledge<Read>) -> Result<Vec<String>, KnowledgeError> {
    ///     let mut names = Vec::new();
    ///     let mut after = None;
    ///     loop {
    ///         let page = kb.list(500, after.as_ref()).await?;
    ///         names.extend(page.documents.into_iter().map(|document| document.filename));
    ///         match page.next {
    ///             Some(next) => after = Some(next),
    ///             None => return Ok(names),
    ///         }
    ///     }
    /// }
    /// ```
    pub async fn list(
        &self,
        limit: usize,
        after: Option<&ListCursor>,
    ) -> Result<Listing, KnowledgeError> {
        let found = self.store.list(&self.scope, limit, after).await;
        let answer = match &found {
            Ok(listing) => Answer::Count(listing.documents.len()),
            Err(error) => Answer::Failed(error.to_string()),
        };
        let after = after.map(ListCursor::filename);
        self.record("knowledge.list", Call::List { limit, after }, answer);
        found
    }

    /// Records one call of this handle, with what it answered.
    fn record(&self, event: &str, call: Call<'_>, answer: Answer) {
        self.audit.record(
            event,
            Audited {
                level: L::LEVEL,
                call,
                answer,
            },
        );
    }
}

/// An audited knowledge call: the handle's level, the call's arguments (never a
/// document's content), and what it answered.
#[derive(Serialize)]
struct Audited<'a> {
    level: KnowledgeLevel,
    #[serde(flatten)]
    call: Call<'a>,
    #[serde(flatten)]
    answer: Answer,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Call<'a> {
    Search {
        query: &'a str,
        limit: usize,
    },
    Document {
        id: i64,
    },
    List {
        limit: usize,
        #[serde(skip_serializing_if = "Option::is_none")]
        after: Option<&'a str>,
    },
    Write {
        filename: &'a str,
        bytes: usize,
    },
}

#[derive(Serialize)]
#[serde(rename_all = "snake_case")]
enum Answer {
    Count(usize),
    Found(bool),
    /// A mutation's document id and whether it created it.
    Written {
        id: i64,
        created: bool,
    },
    Refused(Refusal),
    Failed(String),
}

impl Answer {
    fn of(mutation: &Mutation) -> Self {
        match mutation {
            Ok(written) => Self::Written {
                id: written.document.id,
                created: written.created,
            },
            Err(refusal) => Self::Refused(refusal.clone()),
        }
    }
}

impl<L: CanWrite> Knowledge<L> {
    /// Creates `filename`, or updates it if this plugin wrote it (any, at manage).
    pub async fn write(&self, filename: &str, content: &str) -> Mutation {
        let written = self.store.write(&self.scope, filename, content).await;
        let call = Call::Write {
            filename,
            bytes: content.len(),
        };
        self.record("knowledge.write", call, Answer::of(&written));
        written
    }

    /// Deletes the document `id` if this plugin wrote it (any, at manage).
    pub async fn delete(&self, id: i64) -> Mutation {
        let deleted = self.store.delete(&self.scope, id).await;
        self.record(
            "knowledge.delete",
            Call::Document { id },
            Answer::of(&deleted),
        );
        deleted
    }
}

impl<L: Level> fmt::Debug for Knowledge<L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Knowledge")
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}
