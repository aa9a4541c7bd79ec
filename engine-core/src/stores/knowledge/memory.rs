//! [`MemoryKnowledge`]: a knowledge store held in the process, for an engine that keeps
//! no files (a test, an embedded host) and for the store suite's memory run.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use plugin_sdk::engine::{BoxFuture, KnowledgeStore, Scope};
use plugin_sdk::knowledge::{
    Document, DocumentSummary, KnowledgeError, KnowledgeLevel, ListCursor, Listing, Mutation,
    Refusal, SearchError, SearchHit, Written,
};

use super::{answered, refuse_write, search_words};
use crate::config::KnowledgeLimits;

/// How many words of a document a search hit quotes, as SQLite's snippet does.
const SNIPPET_WORDS: usize = 16;

/// The longest passage a hit quotes, in bytes: a word of a document without separators
/// (base64, a long URL) is one word, and one answer holds up to
/// [`super::MAX_ANSWERED_DOCUMENTS`] hits.
const SNIPPET_BYTES: usize = 256;

/// Every agent's documents, in memory: searched word by word (case folded, any word of
/// the query matching in the name or the text, the documents with more matches first),
/// bounded and refused as every knowledge store is ([`search_words`], [`refuse_write`]).
/// Gone when the process ends. Its work runs on the caller's thread under one lock: a
/// store for tests and small hosts, not for many agents' large documents.
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
    spans(text).map(|(start, end)| text[start..end].to_lowercase())
}

/// Where each word of `text` starts and ends, in bytes.
fn spans(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut chars = text.char_indices().peekable();
    std::iter::from_fn(move || {
        let (start, _) = chars.find(|(_, c)| c.is_alphanumeric())?;
        let mut end = text.len();
        while let Some(&(at, c)) = chars.peek() {
            if !c.is_alphanumeric() {
                end = at;
                break;
            }
            chars.next();
        }
        Some((start, end))
    })
}

/// The passage of `content` around its first word in `query`: [`SNIPPET_WORDS`] words
/// and what lies between them, at most [`SNIPPET_BYTES`], with `…` where it cuts.
fn snippet(content: &str, query: &[String]) -> String {
    let all: Vec<(usize, usize)> = spans(content).collect();
    let Some(&(_, last_end)) = all.last() else {
        return String::new();
    };
    let first = all
        .iter()
        .position(|&(start, end)| query.contains(&content[start..end].to_lowercase()))
        .unwrap_or(0);
    let from = first.saturating_sub(SNIPPET_WORDS / 2);
    let to = (from + SNIPPET_WORDS).min(all.len());
    let from = to.saturating_sub(SNIPPET_WORDS);
    let (start, mut end) = (all[from].0, all[to - 1].1);
    if end - start > SNIPPET_BYTES {
        end = start + SNIPPET_BYTES;
        while !content.is_char_boundary(end) {
            end -= 1;
        }
    }
    let mut passage = String::with_capacity(end - start + 6);
    if start > all[0].0 {
        passage.push('…');
    }
    passage.push_str(&content[start..end]);
    if end < last_end {
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
                .take(answered(limit))
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
        after: Option<&'a ListCursor>,
    ) -> BoxFuture<'a, Result<Listing, KnowledgeError>> {
        Box::pin(async move {
            let limit = answered(limit);
            let documents = self.documents();
            let mut listed: Vec<&Document> = documents
                .of(&scope.agent)
                .filter(|document| {
                    after.is_none_or(|after| document.filename.as_str() > after.filename())
                })
                .collect();
            // Names compare as bytes, as the databases' `C` collation does.
            listed.sort_by(|a, b| a.filename.cmp(&b.filename));
            let fetched = listed
                .into_iter()
                .take(limit + 1)
                .map(|document| DocumentSummary {
                    id: document.id,
                    filename: document.filename.clone(),
                    origin: document.origin,
                    origin_ref: document.origin_ref.clone(),
                    size: document.content.len(),
                })
                .collect();
            Ok(Listing::page(fetched, limit))
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
                .map(|document| (document.id, document.origin, document.origin_ref.clone()));
            let (id, origin, origin_ref, created) = match existing {
                Some((_, origin, origin_ref)) if !scope.may_change(origin, &origin_ref) => {
                    return Err(Refusal::NotOwned);
                }
                Some((id, origin, origin_ref)) => {
                    let (origin, origin_ref) = scope.owner_after_update(origin, origin_ref);
                    (id, origin, origin_ref, false)
                }
                None => {
                    let max = self.limits.max_documents;
                    if documents.of(&scope.agent).count() >= max {
                        return Err(Refusal::LimitReached { limit: max });
                    }
                    documents.next_id += 1;
                    let id = documents.next_id;
                    (id, scope.origin, scope.origin_ref.clone(), true)
                }
            };
            let document = Document {
                id,
                filename: filename.to_owned(),
                content: content.to_owned(),
                origin,
                origin_ref,
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
            if !scope.may_change(stored.document.origin, &stored.document.origin_ref) {
                return Err(Refusal::NotOwned);
            }
            let stored = documents.by_id.remove(&id).expect("found above");
            Ok(Written {
                document: stored.document,
                created: false,
            })
        })
    }

    fn wipe<'a>(&'a self, agent: &'a str) -> BoxFuture<'a, Result<usize, Refusal>> {
        Box::pin(async move {
            let mut documents = self.documents();
            let before = documents.by_id.len();
            documents.by_id.retain(|_, stored| stored.agent != agent);
            Ok(before - documents.by_id.len())
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
        assert_eq!(snippet("short text.", &["none".to_owned()]), "short text");
        assert_eq!(snippet(" ,; ", &["none".to_owned()]), "");
        // Punctuation separates words, as FTS5's tokenizer does.
        let listed: Vec<String> = (0..40).map(|n| format!("w{n}")).collect();
        let passage = snippet(&listed.join(","), &["w20".to_owned()]);
        assert_eq!(passage, format!("…{}…", listed[12..28].join(",")));
    }

    #[test]
    fn a_snippet_of_one_endless_word_is_bounded_at_a_character() {
        // Three bytes each, and alphanumeric: 256 falls inside one.
        let endless = "中".repeat(10_000);
        let passage = snippet(&endless, std::slice::from_ref(&endless));
        assert!(
            passage.len() <= SNIPPET_BYTES + '…'.len_utf8(),
            "{}",
            passage.len()
        );
        assert!(passage.ends_with('…'));
    }
}
