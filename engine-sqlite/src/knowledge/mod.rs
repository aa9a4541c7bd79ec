//! The embedded knowledge store: SQLite with FTS5 full-text search, one file under the
//! engine's data directory, every agent's documents in it, each agent reaching its own.
//!
//! Every call's work runs off the async workers and stops when the call does (see
//! [`connections`]); a search's words are capped, and it ranks only the agent's documents.

mod busy;
pub(crate) mod connections;
pub(crate) mod query;
mod schema;

use std::path::Path;
use std::sync::Arc;

use plugin_sdk::engine::{BoxFuture, KnowledgeStore, Scope};
use plugin_sdk::knowledge::{
    Document, DocumentSummary, KnowledgeError, KnowledgeLevel, ListCursor, Listing, Mutation,
    Origin, Refusal, SearchError, SearchHit, Written,
};
use rusqlite::{params, Connection, ErrorCode, OptionalExtension, TransactionBehavior};

use connections::Connections;
use engine_core::config::KnowledgeLimits;
use engine_core::stores::knowledge::{refuse_write, sql_limit};

/// The SQLite knowledge store. Its futures run their work on Tokio's blocking pool, so
/// they need a Tokio runtime, as the engine's calls do.
pub struct SqliteKnowledge {
    connections: Arc<Connections>,
    limits: KnowledgeLimits,
}

impl SqliteKnowledge {
    /// Opens (or creates) the store at `path`, bringing its schema up to date. A file
    /// that is not a healthy SQLite database, or one another process keeps locked, is an
    /// error that says so.
    pub fn open(path: &Path, limits: KnowledgeLimits) -> Result<Self, KnowledgeError> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|error| KnowledgeError(error.to_string()))?;
        }
        let busy_timeout = limits.busy_timeout();
        let opened = Connection::open(path).and_then(|mut connection| {
            connections::configure(&connection, busy_timeout)?;
            schema::migrate(&mut connection)
        });
        opened
            .and_then(|()| Connections::open(path, limits.connections, busy_timeout))
            .map(|connections| Self {
                connections: Arc::new(connections),
                limits,
            })
            .map_err(|error| KnowledgeError(format!("{}: {error}", describe(&error))))
    }
}

/// What a store error means for whoever reads it, and what fixes it; without paths or
/// SQL, as the model may read it.
fn describe(error: &rusqlite::Error) -> &'static str {
    match error.sqlite_error_code() {
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => {
            "the database is locked by another process; try again later"
        }
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => {
            "the database file is damaged or is not an SQLite database: restore it from a backup, or move it away for the engine to start an empty one"
        }
        Some(ErrorCode::OperationInterrupted) => "the work was stopped",
        _ => "the database failed",
    }
}

/// A read's error, for the tool: what it means; the details go to the log.
fn read_error(error: rusqlite::Error) -> KnowledgeError {
    tracing::error!(%error, "the knowledge store failed a read");
    KnowledgeError(describe(&error).to_owned())
}

fn unavailable(error: rusqlite::Error) -> Refusal {
    tracing::error!(%error, meaning = describe(&error), "the knowledge store failed a mutation");
    Refusal::Unavailable
}

/// The columns [`document_of`] reads, in its order.
const DOCUMENT: &str = "id, filename, content, origin, origin_ref";

/// A row of [`DOCUMENT`]'s columns.
fn document_of(row: &rusqlite::Row<'_>) -> rusqlite::Result<Document> {
    Ok(Document {
        id: row.get(0)?,
        filename: row.get(1)?,
        content: row.get(2)?,
        origin: origin_of(row, 3)?,
        origin_ref: row.get(4)?,
    })
}

/// The origin in column `index`: a name this engine does not know is a damaged file.
fn origin_of(row: &rusqlite::Row<'_>, index: usize) -> rusqlite::Result<Origin> {
    let name: String = row.get(index)?;
    Origin::from_name(&name).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            index,
            rusqlite::types::Type::Text,
            format!("unknown origin `{name}`").into(),
        )
    })
}

fn document(connection: &Connection, agent: &str, id: i64) -> rusqlite::Result<Option<Document>> {
    connection
        .query_row(
            &format!("SELECT {DOCUMENT} FROM documents WHERE agent = ?1 AND id = ?2"),
            params![agent, id],
            document_of,
        )
        .optional()
}

fn write(
    connection: &mut Connection,
    scope: &Scope,
    filename: &str,
    content: &str,
    max_documents: usize,
) -> rusqlite::Result<Mutation> {
    // Immediate: the write lock is taken first, so the check and the write see one state.
    let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let existing: Option<(i64, Origin, String)> = transaction
        .query_row(
            "SELECT id, origin, origin_ref FROM documents WHERE agent = ?1 AND filename = ?2",
            params![scope.agent, filename],
            |row| Ok((row.get(0)?, origin_of(row, 1)?, row.get(2)?)),
        )
        .optional()?;
    let (id, origin, origin_ref, created) = match existing {
        Some((id, origin, origin_ref)) => {
            if !scope.may_change(origin, &origin_ref) {
                return Ok(Err(Refusal::NotOwned));
            }
            let (origin, origin_ref) = scope.owner_after_update(origin, origin_ref);
            transaction.execute(
                "UPDATE documents SET content = ?1, origin = ?2, origin_ref = ?3 WHERE id = ?4",
                params![content, origin.as_str(), origin_ref, id],
            )?;
            (id, origin, origin_ref, false)
        }
        None => {
            let count: i64 = transaction.query_row(
                "SELECT count(*) FROM documents WHERE agent = ?1",
                params![scope.agent],
                |row| row.get(0),
            )?;
            if usize::try_from(count).unwrap_or(usize::MAX) >= max_documents {
                return Ok(Err(Refusal::LimitReached {
                    limit: max_documents,
                }));
            }
            transaction.execute(
                "INSERT INTO documents (agent, filename, content, origin, origin_ref)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    scope.agent,
                    filename,
                    content,
                    scope.origin.as_str(),
                    scope.origin_ref
                ],
            )?;
            let id = transaction.last_insert_rowid();
            (id, scope.origin, scope.origin_ref.clone(), true)
        }
    };
    transaction.commit()?;
    Ok(Ok(Written {
        document: Document {
            id,
            filename: filename.to_owned(),
            content: content.to_owned(),
            origin,
            origin_ref,
        },
        created,
    }))
}

fn delete(connection: &Connection, scope: &Scope, id: i64) -> rusqlite::Result<Mutation> {
    // One statement checks the owner and deletes: nothing can change in between.
    let deleted = connection
        .query_row(
            &format!(
                "DELETE FROM documents
                 WHERE id = ?1 AND agent = ?2 AND ((origin = ?3 AND origin_ref = ?4) OR ?5)
                 RETURNING {DOCUMENT}"
            ),
            params![
                id,
                scope.agent,
                scope.origin.as_str(),
                scope.origin_ref,
                scope.level >= KnowledgeLevel::Manage
            ],
            document_of,
        )
        .optional()?;
    if let Some(document) = deleted {
        return Ok(Ok(Written {
            document,
            created: false,
        }));
    }
    // Nothing deleted: say why. Ids are never reused, so the answer names that document.
    Ok(Err(match document(connection, &scope.agent, id)? {
        Some(_) => Refusal::NotOwned,
        None => Refusal::NotFound,
    }))
}

fn search(connection: &Connection, query: &str, limit: usize) -> rusqlite::Result<Vec<SearchHit>> {
    // The query names the agent's token (see `query`), so FTS5 matches, ranks and
    // snippets the agent's documents only; `owner` weighs nothing in the rank.
    let mut statement = connection.prepare_cached(
        "SELECT d.id, d.filename, snippet(documents_fts, 1, '', '', '…', 16)
         FROM documents_fts JOIN documents d ON d.id = documents_fts.rowid
         WHERE documents_fts MATCH ?1
         ORDER BY bm25(documents_fts, 1.0, 1.0, 0.0) LIMIT ?2",
    )?;
    let hits = statement.query_map(params![query, sql_limit(limit)], |row| {
        Ok(SearchHit {
            id: row.get(0)?,
            filename: row.get(1)?,
            snippet: row.get(2)?,
        })
    })?;
    hits.collect()
}

fn list(
    connection: &Connection,
    agent: &str,
    limit: usize,
    after: Option<&str>,
) -> rusqlite::Result<Listing> {
    // Names compare as bytes (SQLite's `BINARY`), the order the unique index keeps.
    let mut statement = connection.prepare_cached(
        "SELECT id, filename, origin, origin_ref, length(CAST(content AS BLOB)) FROM documents
         WHERE agent = ?1 AND (?2 IS NULL OR filename > ?2) ORDER BY filename LIMIT ?3",
    )?;
    let limit = sql_limit(limit);
    let rows = statement.query_map(params![agent, after, limit + 1], |row| {
        Ok(DocumentSummary {
            id: row.get(0)?,
            filename: row.get(1)?,
            origin: origin_of(row, 2)?,
            origin_ref: row.get(3)?,
            size: usize::try_from(row.get::<_, i64>(4)?).unwrap_or(usize::MAX),
        })
    })?;
    let fetched = rows.collect::<rusqlite::Result<_>>()?;
    Ok(Listing::page(
        fetched,
        usize::try_from(limit).expect("at most the maximum"),
    ))
}

impl KnowledgeStore for SqliteKnowledge {
    fn search<'a>(
        &'a self,
        scope: &'a Scope,
        query: &'a str,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<SearchHit>, SearchError>> {
        Box::pin(async move {
            let Some(query) = query::fts_query(&scope.agent, query, self.limits.max_search_words)?
            else {
                return Ok(Vec::new());
            };
            self.connections
                .run(move |connection| search(connection, &query, limit))
                .await
                .map_err(|error| read_error(error).into())
        })
    }

    fn get<'a>(
        &'a self,
        scope: &'a Scope,
        id: i64,
    ) -> BoxFuture<'a, Result<Option<Document>, KnowledgeError>> {
        let agent = scope.agent.clone();
        Box::pin(async move {
            self.connections
                .run(move |connection| document(connection, &agent, id))
                .await
                .map_err(read_error)
        })
    }

    fn list<'a>(
        &'a self,
        scope: &'a Scope,
        limit: usize,
        after: Option<&'a ListCursor>,
    ) -> BoxFuture<'a, Result<Listing, KnowledgeError>> {
        let agent = scope.agent.clone();
        let after = after.map(|after| after.filename().to_owned());
        Box::pin(async move {
            self.connections
                .run(move |connection| list(connection, &agent, limit, after.as_deref()))
                .await
                .map_err(read_error)
        })
    }

    fn write<'a>(
        &'a self,
        scope: &'a Scope,
        filename: &'a str,
        content: &'a str,
    ) -> BoxFuture<'a, Mutation> {
        Box::pin(async move {
            if let Some(refusal) = refuse_write(&self.limits, scope, filename, content) {
                return Err(refusal);
            }
            let (scope, filename, content) =
                (scope.clone(), filename.to_owned(), content.to_owned());
            let max_documents = self.limits.max_documents;
            self.connections
                .run(move |connection| {
                    write(connection, &scope, &filename, &content, max_documents)
                })
                .await
                .unwrap_or_else(|error| Err(unavailable(error)))
        })
    }

    fn delete<'a>(&'a self, scope: &'a Scope, id: i64) -> BoxFuture<'a, Mutation> {
        Box::pin(async move {
            if scope.level < KnowledgeLevel::Write {
                return Err(Refusal::NotGranted);
            }
            let scope = scope.clone();
            self.connections
                .run(move |connection| delete(connection, &scope, id))
                .await
                .unwrap_or_else(|error| Err(unavailable(error)))
        })
    }

    fn wipe<'a>(&'a self, agent: &'a str) -> BoxFuture<'a, Result<usize, Refusal>> {
        let agent = agent.to_owned();
        Box::pin(async move {
            self.connections
                .run(move |connection| {
                    connection.execute("DELETE FROM documents WHERE agent = ?1", params![agent])
                })
                .await
                .map_err(unavailable)
        })
    }
}
