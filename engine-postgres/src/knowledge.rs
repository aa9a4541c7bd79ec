//! The knowledge base on PostgreSQL, with its own full-text search (a `tsvector` over
//! the filename and the content, `ts_rank` to order, `ts_headline` for snippets), under
//! the same rules as the SQLite store: an agent reaches only its own documents, a query's
//! words are bounded alike, a write below `manage` touches only its plugin's documents,
//! and the count of an agent's documents is capped (its writes take a lock of the
//! agent's, so replicas writing at once count one after the other).

use std::sync::Arc;

use plugin_sdk::engine::{BoxFuture, KnowledgeStore, Scope};
use plugin_sdk::knowledge::{
    Document, DocumentSummary, KnowledgeError, KnowledgeLevel, ListCursor, Listing, Mutation,
    Origin, Refusal, SearchError, SearchHit, Written,
};
use tokio_postgres::Row;

use super::{DatabaseError, Postgres};
use engine_core::config::KnowledgeLimits;
use engine_core::stores::knowledge::search_words;
use engine_core::stores::knowledge::{refuse_write, sql_limit};

/// The knowledge store in the shared database, under [`KnowledgeLimits`].
pub struct PostgresKnowledge {
    database: Arc<Postgres>,
    limits: KnowledgeLimits,
}

impl PostgresKnowledge {
    /// Knowledge in `database`, under `limits`.
    pub fn new(database: Arc<Postgres>, limits: KnowledgeLimits) -> Self {
        Self { database, limits }
    }
}

/// The columns [`document`] reads, in its order.
const DOCUMENT: &str = "id, filename, content, origin, origin_ref";

/// A row of [`DOCUMENT`]'s columns.
fn document(row: &Row) -> Result<Document, DatabaseError> {
    Ok(Document {
        id: row.get(0),
        filename: row.get(1),
        content: row.get(2),
        origin: origin(row, 3)?,
        origin_ref: row.get(4),
    })
}

/// The origin in column `index`: a name this engine does not know is a damaged row.
fn origin(row: &Row, index: usize) -> Result<Origin, DatabaseError> {
    let name: &str = row.get(index);
    Origin::from_name(name)
        .ok_or_else(|| DatabaseError::Failed(format!("a document has the unknown origin `{name}`")))
}

/// A read's error, for the tool: what it means; the details go to the log.
fn read_error(error: DatabaseError) -> KnowledgeError {
    tracing::error!(%error, "the knowledge store failed a read");
    KnowledgeError(
        match error {
            DatabaseError::TimedOut(_) => "the database did not answer in time",
            DatabaseError::Unavailable(_) => "the database could not be reached",
            DatabaseError::Failed(_) => "the database failed",
        }
        .to_owned(),
    )
}

fn unavailable(error: DatabaseError) -> Refusal {
    tracing::error!(%error, "the knowledge store failed a mutation");
    Refusal::Unavailable
}

/// `words` as a `tsquery` that any of them matches. Each word is alphanumeric (see
/// [`search_words`]), so quoting it keeps any query syntax out.
fn any_word(words: &[String]) -> String {
    words
        .iter()
        .map(|word| format!("'{word}'"))
        .collect::<Vec<_>>()
        .join(" | ")
}

impl Postgres {
    async fn search(
        &self,
        agent: &str,
        query: &str,
        limit: usize,
    ) -> Result<Vec<SearchHit>, DatabaseError> {
        let limit = sql_limit(limit);
        self.bounded(async {
            // Ranked and cut first; only the documents answered get a snippet.
            let rows = self
                .connection()
                .await?
                .query(
                    "WITH query AS (SELECT to_tsquery('simple', $2) AS q),
                     best AS (
                         SELECT d.id, d.filename, d.content, ts_rank(d.words, query.q) AS rank
                         FROM documents d, query
                         WHERE d.agent = $1 AND d.words @@ query.q
                         ORDER BY rank DESC, d.id LIMIT $3
                     )
                     SELECT best.id, best.filename,
                            ts_headline('simple', best.content, query.q,
                                'StartSel=\"\", StopSel=\"\", MaxWords=16, MinWords=10, FragmentDelimiter=…')
                     FROM best, query ORDER BY best.rank DESC, best.id",
                    &[&agent, &query, &limit],
                )
                .await?;
            Ok(rows
                .iter()
                .map(|row| SearchHit {
                    id: row.get(0),
                    filename: row.get(1),
                    snippet: row.get(2),
                })
                .collect())
        })
        .await
    }

    async fn document(&self, agent: &str, id: i64) -> Result<Option<Document>, DatabaseError> {
        self.bounded(async {
            let row = self
                .connection()
                .await?
                .query_opt(
                    &format!("SELECT {DOCUMENT} FROM documents WHERE agent = $1 AND id = $2"),
                    &[&agent, &id],
                )
                .await?;
            row.as_ref().map(document).transpose()
        })
        .await
    }

    async fn list(
        &self,
        agent: &str,
        limit: usize,
        after: Option<&str>,
    ) -> Result<Listing, DatabaseError> {
        let limit = sql_limit(limit);
        self.bounded(async {
            // Names compare as bytes (`C`), as the other stores order them, whatever the
            // database's collation.
            let rows = self
                .connection()
                .await?
                .query(
                    "SELECT id, filename, origin, origin_ref, octet_length(content) FROM documents
                     WHERE agent = $1 AND ($2::TEXT IS NULL OR filename COLLATE \"C\" > $2)
                     ORDER BY filename COLLATE \"C\" LIMIT $3",
                    &[&agent, &after, &(limit + 1)],
                )
                .await?;
            let fetched = rows
                .iter()
                .map(|row| {
                    Ok(DocumentSummary {
                        id: row.get(0),
                        filename: row.get(1),
                        origin: origin(row, 2)?,
                        origin_ref: row.get(3),
                        size: usize::try_from(row.get::<_, i32>(4)).unwrap_or(usize::MAX),
                    })
                })
                .collect::<Result<_, DatabaseError>>()?;
            Ok(Listing::page(
                fetched,
                usize::try_from(limit).expect("at most the maximum"),
            ))
        })
        .await
    }

    async fn wipe(&self, agent: &str) -> Result<usize, DatabaseError> {
        self.bounded(async {
            let deleted = self
                .connection()
                .await?
                .execute("DELETE FROM documents WHERE agent = $1", &[&agent])
                .await?;
            Ok(usize::try_from(deleted).unwrap_or(usize::MAX))
        })
        .await
    }

    async fn write(
        &self,
        scope: &Scope,
        filename: &str,
        content: &str,
        max_documents: usize,
    ) -> Result<Mutation, DatabaseError> {
        self.bounded(async {
            let mut connection = self.connection().await?;
            let transaction = connection.transaction().await?;
            // The agent's writes one at a time, on every replica: the count and the
            // owner are checked against what the write changes.
            transaction
                .execute(
                    "SELECT pg_advisory_xact_lock(hashtextextended('knowledge:' || $1, 0))",
                    &[&scope.agent],
                )
                .await?;
            let existing = transaction
                .query_opt(
                    "SELECT id, origin, origin_ref FROM documents
                     WHERE agent = $1 AND filename = $2",
                    &[&scope.agent, &filename],
                )
                .await?;
            let (id, origin, origin_ref, created) = match existing {
                Some(row) => {
                    let (id, origin, origin_ref): (i64, Origin, String) =
                        (row.get(0), origin(&row, 1)?, row.get(2));
                    if !scope.may_change(origin, &origin_ref) {
                        return Ok(Err(Refusal::NotOwned));
                    }
                    let (origin, origin_ref) = scope.owner_after_update(origin, origin_ref);
                    transaction
                        .execute(
                            "UPDATE documents SET content = $1, origin = $2, origin_ref = $3
                             WHERE id = $4",
                            &[&content, &origin.as_str(), &origin_ref, &id],
                        )
                        .await?;
                    (id, origin, origin_ref, false)
                }
                None => {
                    let count: i64 = transaction
                        .query_one(
                            "SELECT count(*) FROM documents WHERE agent = $1",
                            &[&scope.agent],
                        )
                        .await?
                        .get(0);
                    if usize::try_from(count).unwrap_or(usize::MAX) >= max_documents {
                        return Ok(Err(Refusal::LimitReached {
                            limit: max_documents,
                        }));
                    }
                    let id: i64 = transaction
                        .query_one(
                            "INSERT INTO documents (agent, filename, content, origin, origin_ref)
                             VALUES ($1, $2, $3, $4, $5) RETURNING id",
                            &[
                                &scope.agent,
                                &filename,
                                &content,
                                &scope.origin.as_str(),
                                &scope.origin_ref,
                            ],
                        )
                        .await?
                        .get(0);
                    (id, scope.origin, scope.origin_ref.clone(), true)
                }
            };
            transaction.commit().await?;
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
        })
        .await
    }

    async fn delete(&self, scope: &Scope, id: i64) -> Result<Mutation, DatabaseError> {
        self.bounded(async {
            let connection = self.connection().await?;
            // One statement checks the owner and deletes: nothing can change in between.
            let deleted = connection
                .query_opt(
                    &format!(
                        "DELETE FROM documents
                         WHERE id = $1 AND agent = $2
                           AND ((origin = $3 AND origin_ref = $4) OR $5)
                         RETURNING {DOCUMENT}"
                    ),
                    &[
                        &id,
                        &scope.agent,
                        &scope.origin.as_str(),
                        &scope.origin_ref,
                        &(scope.level >= KnowledgeLevel::Manage),
                    ],
                )
                .await?;
            if let Some(row) = deleted {
                return Ok(Ok(Written {
                    document: document(&row)?,
                    created: false,
                }));
            }
            // Nothing deleted: say why. Ids are never reused.
            let exists = connection
                .query_opt(
                    "SELECT 1 FROM documents WHERE agent = $1 AND id = $2",
                    &[&scope.agent, &id],
                )
                .await?
                .is_some();
            Ok(Err(if exists {
                Refusal::NotOwned
            } else {
                Refusal::NotFound
            }))
        })
        .await
    }
}

impl KnowledgeStore for PostgresKnowledge {
    fn search<'a>(
        &'a self,
        scope: &'a Scope,
        query: &'a str,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<SearchHit>, SearchError>> {
        Box::pin(async move {
            let words = search_words(query, self.limits.max_search_words)?;
            if words.is_empty() {
                return Ok(Vec::new());
            }
            self.database
                .search(&scope.agent, &any_word(&words), limit)
                .await
                .map_err(|error| read_error(error).into())
        })
    }

    fn get<'a>(
        &'a self,
        scope: &'a Scope,
        id: i64,
    ) -> BoxFuture<'a, Result<Option<Document>, KnowledgeError>> {
        Box::pin(async move {
            self.database
                .document(&scope.agent, id)
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
        Box::pin(async move {
            self.database
                .list(&scope.agent, limit, after.map(ListCursor::filename))
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
            self.database
                .write(scope, filename, content, self.limits.max_documents)
                .await
                .unwrap_or_else(|error| Err(unavailable(error)))
        })
    }

    fn delete<'a>(&'a self, scope: &'a Scope, id: i64) -> BoxFuture<'a, Mutation> {
        Box::pin(async move {
            if scope.level < KnowledgeLevel::Write {
                return Err(Refusal::NotGranted);
            }
            self.database
                .delete(scope, id)
                .await
                .unwrap_or_else(|error| Err(unavailable(error)))
        })
    }

    fn wipe<'a>(&'a self, agent: &'a str) -> BoxFuture<'a, Result<usize, Refusal>> {
        Box::pin(async move { self.database.wipe(agent).await.map_err(unavailable) })
    }
}
