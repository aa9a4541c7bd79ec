//! Replacing secret values in text: each secret as written, and as it reads once JSON or
//! Rust's `Debug` has escaped it.

use std::borrow::Cow;

/// Replaces secret values in text. The engine's redacts every secret it has configured.
pub trait Redact: Send + Sync {
    /// `text` with each secret value replaced by `[REDACTED]`.
    fn redact<'a>(&self, text: &'a str) -> Cow<'a, str>;
}

/// Redacts each of a list of values, as written and in each escaped form JSON or `Debug`
/// gives it.
#[derive(Clone, Debug, Default)]
pub struct RedactValues {
    /// The values as given, once each.
    secrets: Vec<String>,
    /// What is searched for: every escaped form of every value, longest first, so that a
    /// form containing another is replaced whole.
    patterns: Vec<String>,
}

impl RedactValues {
    /// Redacts nothing.
    pub(crate) const EMPTY: RedactValues = RedactValues {
        secrets: Vec::new(),
        patterns: Vec::new(),
    };

    /// Redacts `values` (empty ones are ignored: they would match everywhere).
    pub fn new(values: impl IntoIterator<Item = String>) -> Self {
        let mut redact = Self::default();
        for value in values {
            redact.push(&value);
        }
        redact
    }

    /// These values and `values` too (a reloaded configuration's secrets, joining those
    /// of the configuration before it).
    pub fn extended(&self, values: impl IntoIterator<Item = String>) -> Self {
        let mut redact = self.clone();
        for value in values {
            redact.push(&value);
        }
        redact
    }

    /// Redacts `value` too (an empty one is ignored: it would match everywhere).
    pub fn push(&mut self, value: &str) {
        if value.is_empty() || self.secrets.iter().any(|known| known == value) {
            return;
        }
        self.secrets.push(value.to_owned());
        for form in escaped_forms(value) {
            if !self.patterns.contains(&form) {
                self.patterns.push(form);
            }
        }
        self.patterns
            .sort_by_key(|pattern| std::cmp::Reverse(pattern.len()));
    }

    /// Whether there is nothing to redact: callers on a hot path skip the scan.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// The values as given (not their escaped forms).
    pub(crate) fn secrets(&self) -> impl Iterator<Item = &str> {
        self.secrets.iter().map(String::as_str)
    }
}

impl Redact for RedactValues {
    /// Every match of every form is found in the text as given, overlapping and adjacent
    /// matches merged, and each merged span replaced once: with secrets `alpha-beta` and
    /// `beta-gamma`, `alpha-beta-gamma` leaves nothing of either.
    fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut spans = Vec::new();
        for pattern in &self.patterns {
            let mut from = 0;
            while let Some(found) = text[from..].find(pattern.as_str()) {
                let start = from + found;
                spans.push((start, start + pattern.len()));
                // On by one character, so that overlapping matches are found too.
                from = start + text[start..].chars().next().map_or(1, char::len_utf8);
            }
        }
        if spans.is_empty() {
            return Cow::Borrowed(text);
        }
        spans.sort_unstable();
        let mut clean = String::with_capacity(text.len());
        let mut copied = 0;
        let mut spans = spans.into_iter();
        let mut current = spans.next().expect("not empty");
        for (start, end) in spans {
            if start <= current.1 {
                current.1 = current.1.max(end);
            } else {
                clean.push_str(&text[copied..current.0]);
                clean.push_str("[REDACTED]");
                copied = current.1;
                current = (start, end);
            }
        }
        clean.push_str(&text[copied..current.0]);
        clean.push_str("[REDACTED]");
        clean.push_str(&text[current.1..]);
        Cow::Owned(clean)
    }
}

/// `secret` as it can appear in output: as written; JSON-escaped (serde_json's form, and
/// the ASCII-only form with `\uXXXX` for every non-ASCII character, which Python's
/// `json.dumps` writes); `Debug`-escaped (`{:?}` of a `String`: `\"`, `\\`, `\n`,
/// `\u{1}`); and each of those escaped once more, since a log line often quotes JSON with
/// `Debug` (tracing prints string fields that way) and a JSON detail often holds a
/// `Debug` rendering; and as tracing-subscriber's formatter writes a message or a field
/// shown with `Display` (terminal control characters as `\x07`). Forms equal to one
/// another are given once.
fn escaped_forms(secret: &str) -> Vec<String> {
    let json = json_escaped(secret);
    let debug = debug_escaped(secret);
    let terminal = terminal_escaped(secret);
    let mut forms = vec![
        secret.to_owned(),
        json_escaped(&terminal),
        terminal,
        ascii_json_escaped(secret),
        json_escaped(&debug),
        debug_escaped(&json),
        json_escaped(&json),
        debug_escaped(&debug),
        json,
        debug,
    ];
    forms.sort();
    forms.dedup();
    forms
}

/// The inside of `value` as a JSON string.
fn json_escaped(value: &str) -> String {
    let quoted = serde_json::to_string(value).expect("a string serializes");
    quoted[1..quoted.len() - 1].to_owned()
}

/// The inside of `value`'s `Debug` rendering.
fn debug_escaped(value: &str) -> String {
    let quoted = format!("{value:?}");
    quoted[1..quoted.len() - 1].to_owned()
}

/// `value` as tracing-subscriber's formatter writes text it shows with `Display`: the
/// characters a terminal could act on spelled out (its `escape.rs`, 0.3.20 and later).
fn terminal_escaped(value: &str) -> String {
    let mut escaped = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\x1b' | '\x07' | '\x08' | '\x0c' | '\x7f' => {
                escaped.push_str(&format!("\\x{:02x}", u32::from(c)));
            }
            '\u{80}'..='\u{9f}' => escaped.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => escaped.push(c),
        }
    }
    escaped
}

/// The inside of `value` as a JSON string with only ASCII characters.
fn ascii_json_escaped(value: &str) -> String {
    let mut escaped = String::new();
    for c in json_escaped(value).chars() {
        if c.is_ascii() {
            escaped.push(c);
        } else {
            for unit in c.encode_utf16(&mut [0; 2]) {
                escaped.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "k\"e\\y\n\u{1}é";

    #[test]
    fn every_escaped_form_of_a_secret_is_redacted() {
        let redact = RedactValues::new([SECRET.to_owned()]);
        let json = serde_json::to_string(SECRET).unwrap();
        let debug = format!("{SECRET:?}");
        for shown in [
            SECRET.to_owned(),
            json.clone(),
            debug.clone(),
            format!("{json:?}"),
            serde_json::to_string(&debug).unwrap(),
            serde_json::to_string(&json).unwrap(),
            r#""k\"e\\y\n\u0001\u00e9""#.to_owned(),
        ] {
            let text = format!("before {shown} after");
            let clean = redact.redact(&text);
            assert!(
                clean.starts_with("before ") && clean.ends_with(" after"),
                "{clean}"
            );
            assert!(clean.contains("[REDACTED]"), "{shown} was not redacted");
            for leftover in ["k\"e", "k\\\"e", "y\n", "\\u{1}", "\\u0001", "é", "\\u00e9"] {
                assert!(
                    !clean.contains(leftover),
                    "{shown} left {leftover}: {clean}"
                );
            }
        }
    }

    #[test]
    fn a_secret_as_tracing_shows_control_characters_is_redacted() {
        let redact = RedactValues::new(["ab\x07cd\u{85}-4242".to_owned()]);
        let clean = redact.redact(r"leaked by a log line: ab\x07cd\u{85}-4242.");
        assert_eq!(clean, "leaked by a log line: [REDACTED].");
    }

    #[test]
    fn overlapping_secrets_are_redacted_whole() {
        let redact = RedactValues::new(["alpha-beta".to_owned(), "beta-gamma".to_owned()]);
        assert_eq!(redact.redact("x alpha-beta-gamma y"), "x [REDACTED] y");
        let redact = RedactValues::new(["aba".to_owned()]);
        assert_eq!(redact.redact("ababa, aba"), "[REDACTED], [REDACTED]");
    }

    #[test]
    fn a_plain_secret_has_one_form_and_empty_values_are_ignored() {
        assert_eq!(escaped_forms("plain-123"), ["plain-123"]);
        let redact = RedactValues::new(["".to_owned(), "abc".to_owned()]);
        assert_eq!(redact.redact("xabcx"), "x[REDACTED]x");
        assert_eq!(redact.secrets().collect::<Vec<_>>(), ["abc"]);
    }
}
