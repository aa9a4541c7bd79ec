//! What every knowledge store refuses and bounds alike, whichever the backend: a
//! search's words, how many documents one answer holds, what a write may be.

mod memory;

use std::collections::HashSet;

use plugin_sdk::engine::Scope;
use plugin_sdk::knowledge::{KnowledgeLevel, Refusal, SearchError};

use crate::config::KnowledgeLimits;

pub use memory::MemoryKnowledge;

/// The most documents one search or list answers, whatever limit the tool asks for:
/// each answered document is read, held and sent to the model.
pub const MAX_ANSWERED_DOCUMENTS: usize = 1000;

/// The longest query searched, in bytes. FTS5 splits words on its own character classes
/// (a combining mark separates, for one), so what reads here as one word can be many
/// terms, which FTS5 parses in one step that nothing interrupts: the length of the text
/// bounds them, whatever the words.
pub const MAX_QUERY_BYTES: usize = 4096;

/// The longest word searched, in characters: longer is no word a person searches for,
/// and may be many FTS5 terms in one phrase.
pub const MAX_WORD_CHARS: usize = 64;

/// The distinct words of `text`, folded to lower case, in order: more than `max_words`
/// is refused (each costs a pass over the index), then a word longer than
/// [`MAX_WORD_CHARS`], then a text longer than [`MAX_QUERY_BYTES`]. Every knowledge
/// store searches these, so a query is bounded alike whichever the store.
pub fn search_words(text: &str, max_words: usize) -> Result<Vec<String>, SearchError> {
    let mut seen = HashSet::new();
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        // Both stores fold case, so words that differ only in case are one word.
        .map(str::to_lowercase)
        .filter(|word| seen.insert(word.clone()))
        .collect();
    if words.len() > max_words {
        return Err(SearchError::TooManyWords {
            words: words.len(),
            limit: max_words,
        });
    }
    if let Some(chars) = words
        .iter()
        .map(|word| word.chars().count())
        .find(|&chars| chars > MAX_WORD_CHARS)
    {
        return Err(SearchError::WordTooLong {
            chars,
            limit: MAX_WORD_CHARS,
        });
    }
    if text.len() > MAX_QUERY_BYTES {
        return Err(SearchError::QueryTooLong {
            bytes: text.len(),
            limit: MAX_QUERY_BYTES,
        });
    }
    Ok(words)
}

/// `limit` as a store answers it: at least one (a page of none would read as the end),
/// at most [`MAX_ANSWERED_DOCUMENTS`].
pub fn answered(limit: usize) -> usize {
    limit.clamp(1, MAX_ANSWERED_DOCUMENTS)
}

/// [`answered`] as a `LIMIT`.
pub fn sql_limit(limit: usize) -> i64 {
    i64::try_from(answered(limit)).expect("the maximum fits in an i64")
}

/// What `limits` and the scope's level refuse of a write before any store is reached.
pub fn refuse_write(
    limits: &KnowledgeLimits,
    scope: &Scope,
    filename: &str,
    content: &str,
) -> Option<Refusal> {
    if scope.level < KnowledgeLevel::Write {
        Some(Refusal::NotGranted)
    } else if filename.len() > limits.max_filename_bytes {
        Some(Refusal::NameTooLong {
            size: filename.len(),
            limit: limits.max_filename_bytes,
        })
    } else if content.len() > limits.max_document_bytes {
        Some(Refusal::TooLarge {
            size: content.len(),
            limit: limits.max_document_bytes,
        })
    } else {
        None
    }
}
