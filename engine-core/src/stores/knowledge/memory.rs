//! [`MemoryKnowledge`]: a knowledge store held in the process, for an engine that keeps
//! no files (a test, an embedded host) and for the store suite's memory run.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use plugin_sdk::engine::{BoxFuture, KnowledgeStore, Scope};
use plugin_sdk::knowledge::{
    Document, DocumentSummary, KnowledgeError, KnowledgeLevel, Mutation, Refusal, SearchError,
    SearchHit, Written,
};

use super::{refuse_write, search_words, MAX_ANSWERED_DOCUMENTS};
use crate::config::KnowledgeLimits;

/// How many words of a document a search hit quotes, as SQLite's snippet does.
const SNIPPET_WORDS: usize = 16;

/// Every agent's documents, in memory: searched word by word (case folded, any word of
/// the query matching in the name or the text, the documents with more matches first),
/// bounded and refused as every knowledge store is ([`search_words`], [`refuse_write`]).
/// Gone when the process ends.
pub struct MemoryKnowledge {
    limits: KnowledgeLimits,
    documents: Mutex<Documents>,
}

#[derive(Default)]
struct Documents {
    /// Ids are never reused, as in the databases: a refusal names the document asked for.
    next_id: i64,
    by_id: BTreeMap<i64, Stored>,
}

struct Stored {
    agent: String,
    document: Document,
}

impl MemoryKnowledge {
    /// An empty store under `limits`.
    pub fn new(limits: KnowledgeLimits) -> Self {
        Self {
            limits,
            documents: Mutex::default(),
        }
    }

    fn documents(&self) -> MutexGuard<'_, Documents> {
        // Every change below is one assignment: a panic leaves nothing half-made.
        self.documents
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Documents {
    fn of<'a>(&'a self, agent: &'a str) -> impl Iterator<Item = &'a Document> + 'a {
        self.by_id
            .values()
            .filter(move |stored| stored.agent == agent)
            .map(|stored| &stored.document)
    }
}

/// The words of `text` as a search sees them: split at anything not alphanumeric, in
/// lower case.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
}

/// The passage of `content` around its first word in `query`: [`SNIPPET_WORDS`] words,
/// with `…` where it cuts.
fn snippet(content: &str, query: &[String]) -> String {
    let all: Vec<&str> = content.split_whitespace().collect();
    let first = all
        .iter()
        .position(|word| words(word).any(|word| query.contains(&word)))
        .unwrap_or(0);
    let start = first.saturating_sub(SNIPPET_WORDS / 2);
    let end = (start + SNIPPET_WORDS).min(all.len());
    let start = end.saturating_sub(SNIPPET_WORDS);
    let mut passage = all[start..end].join(" ");
    if start > 0 {
        passage.insert(0, '…');
    }
    if end < all.len() {
        passage.push('…');
    }
    passage
}

impl KnowledgeStore for MemoryKnowledge {
    fn search<'a>(
        &'a self,
        scope: &'a Scope,
        query: &'a str,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<SearchHit>, SearchError>> {
        Box::pin(async move {
            let query = search_words(query, self.limits.max_search_words)?;
            if query.is_empty() {
                return Ok(Vec::new());
            }
            let documents = self.documents();
            let mut scored: Vec<(usize, &Document)> = documents
                .of(&scope.agent)
                .map(|document| {
                    let text = words(&document.filename).chain(words(&document.content));
                    let matches = text.filter(|word| query.contains(word)).count();
                    (matches, document)
                })
                .filter(|(matches, _)| *matches > 0)
                .collect();
            // The most matches first, then the oldest: a stable order for equal ranks.
            scored.sort_by(|(a, x), (b, y)| b.cmp(a).then(x.id.cmp(&y.id)));
            Ok(scored
                .into_iter()
                .take(limit.min(MAX_ANSWERED_DOCUMENTS))
                .map(|(_, document)| SearchHit {
                    id: document.id,
                    filename: document.filename.clone(),
                    snippet: snippet(&document.content, &query),
                })
                .collect())
        })
    }

    fn get<'a>(
        &'a self,
        scope: &'a Scope,
        id: i64,
    ) -> BoxFuture<'a, Result<Option<Document>, KnowledgeError>> {
        Box::pin(async move {
            let documents = self.documents();
            Ok(documents
                .by_id
                .get(&id)
                .filter(|stored| stored.agent == scope.agent)
                .map(|stored| stored.document.clone()))
        })
    }

    fn list<'a>(
        &'a self,
        scope: &'a Scope,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<DocumentSummary>, KnowledgeError>> {
        Box::pin(async move {
            let documents = self.documents();
            let mut listed: Vec<DocumentSummary> = documents
                .of(&scope.agent)
                .map(|document| DocumentSummary {
                    id: document.id,
                    filename: document.filename.clone(),
                    origin: document.origin.clone(),
                    size: document.content.len(),
                })
                .collect();
            listed.sort_by(|a, b| a.filename.cmp(&b.filename));
            listed.truncate(limit.min(MAX_ANSWERED_DOCUMENTS));
            Ok(listed)
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
            let mut documents = self.documents();
            let existing = documents
                .of(&scope.agent)
                .find(|document| document.filename == filename)
                .map(|document| (document.id, document.origin.clone()));
            let (id, origin, created) = match existing {
                Some((_, origin))
                    if origin != scope.origin && scope.level < KnowledgeLevel::Manage =>
                {
                    return Err(Refusal::NotOwned);
                }
                Some((id, origin)) => (id, origin, false),
                None => {
                    let max = self.limits.max_documents;
                    if documents.of(&scope.agent).count() >= max {
                        return Err(Refusal::LimitReached { limit: max });
                    }
                    documents.next_id += 1;
                    (documents.next_id, scope.origin.clone(), true)
                }
            };
            let document = Document {
                id,
                filename: filename.to_owned(),
                content: content.to_owned(),
                origin,
            };
            documents.by_id.insert(
                id,
                Stored {
                    agent: scope.agent.clone(),
                    document: document.clone(),
                },
            );
            Ok(Written { document, created })
        })
    }

    fn delete<'a>(&'a self, scope: &'a Scope, id: i64) -> BoxFuture<'a, Mutation> {
        Box::pin(async move {
            if scope.level < KnowledgeLevel::Write {
                return Err(Refusal::NotGranted);
            }
            let mut documents = self.documents();
            let stored = documents
                .by_id
                .get(&id)
                .filter(|stored| stored.agent == scope.agent)
                .ok_or(Refusal::NotFound)?;
            if stored.document.origin != scope.origin && scope.level < KnowledgeLevel::Manage {
                return Err(Refusal::NotOwned);
            }
            let stored = documents.by_id.remove(&id).expect("found above");
            Ok(Written {
                document: stored.document,
                created: false,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snippet_is_the_passage_around_the_first_match_cut_with_ellipses() {
        let text: Vec<String> = (0..40).map(|n| format!("w{n}")).collect();
        let passage = snippet(&text.join(" "), &["w20".to_owned()]);
        assert_eq!(passage, format!("…{}…", text[12..28].join(" ")));
        assert_eq!(snippet("short text", &["none".to_owned()]), "short text");
    }
}
