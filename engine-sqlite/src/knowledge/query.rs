//! Free text as an FTS5 expression: each distinct word once, quoted (so no query syntax
//! reaches FTS5), any of them matching, within one agent's documents.

use engine_core::stores::knowledge::search_words;
use plugin_sdk::knowledge::SearchError;

/// The FTS5 expression for `text` in `agent`'s documents; `None` without words. Bounded
/// as [`search_words`] says.
pub(super) fn fts_query(
    agent: &str,
    text: &str,
    max_words: usize,
) -> Result<Option<String>, SearchError> {
    let words = search_words(text, max_words)?;
    if words.is_empty() {
        return Ok(None);
    }
    let any_word = words
        .iter()
        .map(|word| format!("\"{word}\""))
        .collect::<Vec<_>>()
        .join(" OR ");
    Ok(Some(format!(
        "owner : \"{}\" AND {{filename content}} : ({any_word})",
        owner_token(agent)
    )))
}

/// The agent as the store indexes it (`owner`, computed by the schema as
/// `'x' || hex(agent)`): one token, whatever the name holds.
fn owner_token(agent: &str) -> String {
    let hex: String = agent.bytes().map(|byte| format!("{byte:02X}")).collect();
    format!("x{hex}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine_core::stores::knowledge::{MAX_QUERY_BYTES, MAX_WORD_CHARS};

    #[test]
    fn words_are_deduplicated_quoted_and_kept_to_the_agent() {
        let query = fts_query("a-b", "Refunds (refunds) \"days", 8)
            .unwrap()
            .unwrap();
        assert_eq!(
            query,
            "owner : \"x612D62\" AND {filename content} : (\"refunds\" OR \"days\")"
        );
        assert_eq!(fts_query("a", " ,; ", 8), Ok(None));
    }

    #[test]
    fn more_distinct_words_than_the_cap_are_refused_naming_it() {
        let text = "one two three two ONE four";
        assert!(fts_query("a", text, 4).is_ok());
        assert_eq!(
            fts_query("a", text, 3),
            Err(SearchError::TooManyWords { words: 4, limit: 3 })
        );
    }

    #[test]
    fn a_word_fts5_splits_into_many_terms_is_refused_by_its_length() {
        // One word here (a letter and a combining mark, both alphanumeric to Rust), but
        // FTS5 separates at every mark: 250 000 terms in one phrase.
        let text = "a\u{093e}".repeat(250_000);
        assert_eq!(
            fts_query("a", &text, 8),
            Err(SearchError::WordTooLong {
                chars: 500_000,
                limit: MAX_WORD_CHARS
            })
        );
        let word = "a\u{093e}".repeat(MAX_WORD_CHARS / 2 + 1);
        assert_eq!(
            fts_query("a", &format!("refunds {word}"), 8),
            Err(SearchError::WordTooLong {
                chars: MAX_WORD_CHARS + 2,
                limit: MAX_WORD_CHARS
            })
        );
        let longest = "a\u{093e}".repeat(MAX_WORD_CHARS / 2);
        assert!(fts_query("a", &longest, 8).unwrap().is_some());
    }

    #[test]
    fn a_text_longer_than_the_cap_is_refused_however_few_its_words() {
        // Words of the longest length, each a term FTS5 splits in 32: the text's length
        // bounds how many reach it.
        let words: Vec<String> = (0..200)
            .map(|n| format!("{n:03}{}", "a\u{093e}".repeat(30)))
            .collect();
        let text = words.join(" ");
        assert_eq!(
            fts_query("a", &text, 1024),
            Err(SearchError::QueryTooLong {
                bytes: text.len(),
                limit: MAX_QUERY_BYTES
            })
        );
        let repeated = "refunds ".repeat(MAX_QUERY_BYTES / 8 + 1);
        assert!(matches!(
            fts_query("a", &repeated, 8),
            Err(SearchError::QueryTooLong { .. })
        ));
        assert!(fts_query("a", &repeated[..MAX_QUERY_BYTES], 8).is_ok());
    }
}
