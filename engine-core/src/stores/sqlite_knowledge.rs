//! The embedded knowledge store: SQLite with FTS5 full-text search, one file under the
//! engine's data directory, every agent's documents in it, each agent reaching its own.

use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use plugin_sdk::engine::{BoxFuture, KnowledgeStore, Scope};
use plugin_sdk::knowledge::{
    Document, DocumentSummary, KnowledgeError, KnowledgeLevel, Mutation, Refusal, SearchHit,
    Written,
};
use rusqlite::{params, Connection, OptionalExtension};

use crate::config::KnowledgeLimits;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS documents (
    id INTEGER PRIMARY KEY,
    agent TEXT NOT NULL,
    filename TEXT NOT NULL,
    content TEXT NOT NULL,
    origin TEXT NOT NULL,
    UNIQUE (agent, filename)
);
CREATE VIRTUAL TABLE IF NOT EXISTS documents_fts
    USING fts5(filename, content, content = 'documents', content_rowid = 'id');
CREATE TRIGGER IF NOT EXISTS documents_ai AFTER INSERT ON documents BEGIN
    INSERT INTO documents_fts (rowid, filename, content) VALUES (new.id, new.filename, new.content);
END;
CREATE TRIGGER IF NOT EXISTS documents_ad AFTER DELETE ON documents BEGIN
    INSERT INTO documents_fts (documents_fts, rowid, filename, content)
        VALUES ('delete', old.id, old.filename, old.content);
END;
CREATE TRIGGER IF NOT EXISTS documents_au AFTER UPDATE ON documents BEGIN
    INSERT INTO documents_fts (documents_fts, rowid, filename, content)
        VALUES ('delete', old.id, old.filename, old.content);
    INSERT INTO documents_fts (rowid, filename, content) VALUES (new.id, new.filename, new.content);
END;
";

/// The SQLite knowledge store.
///
/// Calls are short local queries, run under one connection's lock on the caller's
/// thread; the store answers its futures at once.
pub struct SqliteKnowledge {
    connection: Mutex<Connection>,
    limits: KnowledgeLimits,
}

impl SqliteKnowledge {
    /// Opens (or creates) the store at `path`.
    pub fn open(path: &Path, limits: KnowledgeLimits) -> Result<Self, KnowledgeError> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|error| KnowledgeError(error.to_string()))?;
        }
        let connection = Connection::open(path).map_err(store_error)?;
        connection.execute_batch(SCHEMA).map_err(store_error)?;
        Ok(Self {
            connection: Mutex::new(connection),
            limits,
        })
    }

    fn connection(&self) -> MutexGuard<'_, Connection> {
        self.connection
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn document(&self, agent: &str, id: i64) -> rusqlite::Result<Option<Document>> {
        self.connection()
            .query_row(
                "SELECT id, filename, content, origin FROM documents WHERE agent = ?1 AND id = ?2",
                params![agent, id],
                |row| {
                    Ok(Document {
                        id: row.get(0)?,
                        filename: row.get(1)?,
                        content: row.get(2)?,
                        origin: row.get(3)?,
                    })
                },
            )
            .optional()
    }

    fn write_now(&self, scope: &Scope, filename: &str, content: &str) -> Mutation {
        if scope.level < KnowledgeLevel::Write {
            return Err(Refusal::NotGranted);
        }
        if content.len() > self.limits.max_document_bytes {
            return Err(Refusal::TooLarge {
                size: content.len(),
                limit: self.limits.max_document_bytes,
            });
        }
        let mut connection = self.connection();
        let transaction = connection.transaction().map_err(unavailable)?;
        let existing: Option<(i64, String)> = transaction
            .query_row(
                "SELECT id, origin FROM documents WHERE agent = ?1 AND filename = ?2",
                params![scope.agent, filename],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()
            .map_err(unavailable)?;
        let (id, origin, created) = match existing {
            Some((id, origin)) => {
                if origin != scope.origin && scope.level < KnowledgeLevel::Manage {
                    return Err(Refusal::NotOwned);
                }
                transaction
                    .execute(
                        "UPDATE documents SET content = ?1 WHERE id = ?2",
                        params![content, id],
                    )
                    .map_err(unavailable)?;
                (id, origin, false)
            }
            None => {
                let count: i64 = transaction
                    .query_row(
                        "SELECT count(*) FROM documents WHERE agent = ?1",
                        params![scope.agent],
                        |row| row.get(0),
                    )
                    .map_err(unavailable)?;
                if count as usize >= self.limits.max_documents {
                    return Err(Refusal::LimitReached {
                        limit: self.limits.max_documents,
                    });
                }
                transaction
                    .execute(
                        "INSERT INTO documents (agent, filename, content, origin) VALUES (?1, ?2, ?3, ?4)",
                        params![scope.agent, filename, content, scope.origin],
                    )
                    .map_err(unavailable)?;
                (transaction.last_insert_rowid(), scope.origin.clone(), true)
            }
        };
        transaction.commit().map_err(unavailable)?;
        Ok(Written {
            document: Document {
                id,
                filename: filename.to_owned(),
                content: content.to_owned(),
                origin,
            },
            created,
        })
    }

    fn delete_now(&self, scope: &Scope, id: i64) -> Mutation {
        if scope.level < KnowledgeLevel::Write {
            return Err(Refusal::NotGranted);
        }
        let document = self
            .document(&scope.agent, id)
            .map_err(unavailable)?
            .ok_or(Refusal::NotFound)?;
        if document.origin != scope.origin && scope.level < KnowledgeLevel::Manage {
            return Err(Refusal::NotOwned);
        }
        self.connection()
            .execute("DELETE FROM documents WHERE id = ?1", params![id])
            .map_err(unavailable)?;
        Ok(Written {
            document,
            created: false,
        })
    }

    fn search_now(
        &self,
        scope: &Scope,
        query: &str,
        limit: usize,
    ) -> rusqlite::Result<Vec<SearchHit>> {
        let Some(query) = fts_query(query) else {
            return Ok(Vec::new());
        };
        let connection = self.connection();
        let mut statement = connection.prepare(
            "SELECT d.id, d.filename, snippet(documents_fts, 1, '', '', '…', 16)
             FROM documents_fts JOIN documents d ON d.id = documents_fts.rowid
             WHERE documents_fts MATCH ?1 AND d.agent = ?2
             ORDER BY rank LIMIT ?3",
        )?;
        let hits = statement.query_map(params![query, scope.agent, limit as i64], |row| {
            Ok(SearchHit {
                id: row.get(0)?,
                filename: row.get(1)?,
                snippet: row.get(2)?,
            })
        })?;
        hits.collect()
    }

    fn list_now(&self, scope: &Scope, limit: usize) -> rusqlite::Result<Vec<DocumentSummary>> {
        let connection = self.connection();
        let mut statement = connection.prepare(
            "SELECT id, filename, origin, length(CAST(content AS BLOB)) FROM documents
             WHERE agent = ?1 ORDER BY filename LIMIT ?2",
        )?;
        let rows = statement.query_map(params![scope.agent, limit as i64], |row| {
            Ok(DocumentSummary {
                id: row.get(0)?,
                filename: row.get(1)?,
                origin: row.get(2)?,
                size: row.get::<_, i64>(3)? as usize,
            })
        })?;
        rows.collect()
    }
}

/// The words of a free-text query as an FTS5 expression: each word quoted (so no query
/// syntax reaches FTS5), any of them matching; `None` without words.
fn fts_query(text: &str) -> Option<String> {
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(|word| format!("\"{word}\""))
        .collect();
    (!words.is_empty()).then(|| words.join(" OR "))
}

fn store_error(error: rusqlite::Error) -> KnowledgeError {
    KnowledgeError(error.to_string())
}

fn unavailable(error: rusqlite::Error) -> Refusal {
    tracing::error!(%error, "the knowledge store failed a mutation");
    Refusal::Unavailable
}

impl KnowledgeStore for SqliteKnowledge {
    fn search<'a>(
        &'a self,
        scope: &'a Scope,
        query: &'a str,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<SearchHit>, KnowledgeError>> {
        Box::pin(std::future::ready(
            self.search_now(scope, query, limit).map_err(store_error),
        ))
    }

    fn get<'a>(
        &'a self,
        scope: &'a Scope,
        id: i64,
    ) -> BoxFuture<'a, Result<Option<Document>, KnowledgeError>> {
        Box::pin(std::future::ready(
            self.document(&scope.agent, id).map_err(store_error),
        ))
    }

    fn list<'a>(
        &'a self,
        scope: &'a Scope,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<DocumentSummary>, KnowledgeError>> {
        Box::pin(std::future::ready(
            self.list_now(scope, limit).map_err(store_error),
        ))
    }

    fn write<'a>(
        &'a self,
        scope: &'a Scope,
        filename: &'a str,
        content: &'a str,
    ) -> BoxFuture<'a, Mutation> {
        Box::pin(std::future::ready(self.write_now(scope, filename, content)))
    }

    fn delete<'a>(&'a self, scope: &'a Scope, id: i64) -> BoxFuture<'a, Mutation> {
        Box::pin(std::future::ready(self.delete_now(scope, id)))
    }
}
