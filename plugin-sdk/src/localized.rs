//! Text for people, in one or more locales.
//!
//! The macros check every literal at compile time (canonical BCP 47 tags, no empty
//! text, no duplicate tag) and sort a map by tag, so at run time a [`LocalizedText`]
//! is always well formed and [`LocalizedText::resolve`] never fails.

/// Text shown to people (a tool's summary, a plugin's display name): one string for
/// every locale, or one string per canonical BCP 47 tag.
///
/// Text for the model (descriptions, schemas) is never localized: translating it
/// would change how the agent behaves from one locale to the next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LocalizedText {
    /// One text for every locale.
    Plain(&'static str),
    /// Pairs of canonical tag and text, sorted by tag, never empty.
    Map(&'static [(&'static str, &'static str)]),
}

impl LocalizedText {
    /// The text for a reader whose locale is `locale` (`"it-IT"`, `"pt"`; case and `_`
    /// versus `-` do not matter).
    ///
    /// A map answers with the reader's tag, else a tag of the same language (the one
    /// sharing most subtags with the reader's), else English (`en-US`, else the first
    /// `en` tag), else the first tag alphabetically.
    pub fn resolve(&self, locale: &str) -> &'static str {
        let entries = match self {
            Self::Plain(text) => return text,
            Self::Map(entries) => *entries,
        };
        let reader: Vec<&str> = subtags(locale).collect();
        let mut best: Option<(usize, &'static str)> = None;
        for &(tag, text) in entries {
            let shared = subtags(tag)
                .zip(&reader)
                .take_while(|(a, b)| a.eq_ignore_ascii_case(b))
                .count();
            // The first subtag is the language: sharing none of it is no match.
            if shared > 0 && best.is_none_or(|(most, _)| shared > most) {
                best = Some((shared, text));
            }
        }
        if let Some((_, text)) = best {
            return text;
        }
        let english = |wanted: &dyn Fn(&str) -> bool| {
            entries.iter().find(|(tag, _)| wanted(tag)).map(|e| e.1)
        };
        english(&|tag| tag == "en-US")
            .or_else(|| english(&|tag| tag == "en" || tag.starts_with("en-")))
            .unwrap_or(entries.first().map_or("", |e| e.1))
    }

    /// Every locale this text names, with its text; a plain text yields `(None, text)`.
    pub fn entries(&self) -> impl Iterator<Item = (Option<&'static str>, &'static str)> {
        let (plain, map) = match self {
            Self::Plain(text) => (Some((None, *text)), &[][..]),
            Self::Map(entries) => (None, *entries),
        };
        plain
            .into_iter()
            .chain(map.iter().map(|&(tag, text)| (Some(tag), text)))
    }
}

fn subtags(tag: &str) -> impl Iterator<Item = &str> {
    tag.split(['-', '_']).filter(|part| !part.is_empty())
}

#[cfg(test)]
mod tests {
    use super::LocalizedText;

    const SUMMARY: LocalizedText = LocalizedText::Map(&[
        ("de-DE", "Bucht einen Termin."),
        ("en-GB", "Books an appointment (GB)."),
        ("en-US", "Books an appointment."),
        ("it-IT", "Prenota un appuntamento."),
        ("zh-Hans-CN", "预约 (Hans)."),
        ("zh-Hant-TW", "預約 (Hant)."),
    ]);

    #[test]
    fn resolve_prefers_the_readers_own_tag() {
        assert_eq!(SUMMARY.resolve("it-IT"), "Prenota un appuntamento.");
        assert_eq!(SUMMARY.resolve("en-GB"), "Books an appointment (GB).");
    }

    #[test]
    fn resolve_ignores_case_and_underscores() {
        assert_eq!(SUMMARY.resolve("it_it"), "Prenota un appuntamento.");
    }

    #[test]
    fn resolve_falls_back_to_the_same_language_closest_first() {
        assert_eq!(SUMMARY.resolve("it-CH"), "Prenota un appuntamento.");
        assert_eq!(SUMMARY.resolve("de"), "Bucht einen Termin.");
        assert_eq!(SUMMARY.resolve("zh-Hant-HK"), "預約 (Hant).");
    }

    #[test]
    fn resolve_falls_back_to_en_us_then_any_english() {
        assert_eq!(SUMMARY.resolve("fr-FR"), "Books an appointment.");
        let british = LocalizedText::Map(&[("en-AU", "AU"), ("en-GB", "GB"), ("fr-FR", "FR")]);
        assert_eq!(british.resolve("ja-JP"), "AU");
    }

    #[test]
    fn resolve_falls_back_to_the_first_tag_without_english() {
        let text = LocalizedText::Map(&[("de-DE", "DE"), ("it-IT", "IT")]);
        assert_eq!(text.resolve("ja"), "DE");
    }

    #[test]
    fn a_plain_text_serves_every_locale() {
        let text = LocalizedText::Plain("Acme");
        assert_eq!(text.resolve("it-IT"), "Acme");
        assert_eq!(text.entries().collect::<Vec<_>>(), [(None, "Acme")]);
    }
}
