//! Which locale a request is for: its `_meta.locale`, else the HTTP `Accept-Language`
//! it came with, else the server's default. The titles' fallback chain then applies
//! (`LocalizedText::resolve`), so any tag is safe to pass on.

use rmcp::service::RequestContext;
use rmcp::RoleServer;

/// The request's locale.
pub fn for_request(context: &RequestContext<RoleServer>, default: &str) -> String {
    let from_meta = context
        .meta
        .0
         .0
        .get("locale")
        .and_then(|value| value.as_str())
        .map(str::to_owned);
    let from_header = || {
        context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.headers.get(axum::http::header::ACCEPT_LANGUAGE))
            .and_then(|value| value.to_str().ok())
            .and_then(|header| preferred_language(header, |_| true))
    };
    from_meta
        .or_else(from_header)
        .unwrap_or_else(|| default.to_owned())
}

/// The most preferred tag of an `Accept-Language` value (`it-IT,it;q=0.9,en;q=0.8`)
/// among those `usable` accepts; `*` names no language. Also the admin panel's, which
/// writes the tag into its pages.
pub fn preferred_language(header: &str, usable: impl Fn(&str) -> bool) -> Option<String> {
    let mut best: Option<(f32, &str)> = None;
    for item in header.split(',') {
        let mut parts = item.split(';');
        let tag = parts.next().unwrap_or_default().trim();
        let quality = parts
            .find_map(|part| part.trim().strip_prefix("q="))
            .map_or(Some(1.0), |q| q.trim().parse::<f32>().ok());
        let Some(quality) = quality else { continue };
        if tag.is_empty() || tag == "*" || quality <= 0.0 || !usable(tag) {
            continue;
        }
        if best.is_none_or(|(most, _)| quality > most) {
            best = Some((quality, tag));
        }
    }
    best.map(|(_, tag)| tag.to_owned())
}

#[cfg(test)]
mod tests {
    use super::preferred_language;

    fn preferred(header: &str) -> Option<String> {
        preferred_language(header, |_| true)
    }

    #[test]
    fn the_most_preferred_tag_wins_and_the_first_among_equals() {
        assert_eq!(
            preferred("it-IT,it;q=0.9,en;q=0.8").as_deref(),
            Some("it-IT")
        );
        assert_eq!(preferred("en;q=0.5, de-DE;q=0.7").as_deref(), Some("de-DE"));
        assert_eq!(preferred("fr, en").as_deref(), Some("fr"));
    }

    #[test]
    fn wildcards_refusals_and_garbage_name_no_language() {
        assert_eq!(preferred("*"), None);
        assert_eq!(preferred("it;q=0"), None);
        assert_eq!(preferred("it;q=abc, ,"), None);
    }
}
