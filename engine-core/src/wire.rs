//! Tool names on the wire: the canonical id `<namespace>:<name>` in a form every surface
//! accepts.
//!
//! OpenAI, Anthropic and Mistral reject `:`, so every catalog names a tool
//! `<namespace>__<name>` (`acme__book_appointment`) and dispatch accepts that name back.
//! The engine's built-ins keep their bare names (`list_files`), which no plugin may take.
//! Namespaces are kebab-case and never contain `_`, so the first `__` always ends the
//! namespace and the mapping is reversible; the registry still checks at start-up that no
//! two tools share a wire name, because a descriptor is data and need not come from the
//! macros. One name on every surface also means that an MCP client that forwards tool
//! names to a model provider forwards a name the provider accepts.

/// What goes between the namespace and the tool name.
pub const SEPARATOR: &str = "__";

/// The wire name of the tool `name` in `namespace`: the bare name for the engine's
/// built-ins (`list_files`, the names the model expects of them, kept from every
/// plugin), `<namespace>__<name>` for every other tool.
pub fn wire_name(namespace: &str, name: &str) -> String {
    if namespace == crate::builtins::BUILTIN_NAMESPACE {
        name.to_owned()
    } else {
        [namespace, SEPARATOR, name].concat()
    }
}

/// The names one surface accepts.
#[derive(Clone, Copy, Debug)]
pub struct NameRules {
    /// Who sets the rule (`OpenAI`).
    pub surface: &'static str,
    /// The longest name accepted, in bytes.
    pub max_len: usize,
    /// The characters accepted, as a person reads them.
    pub alphabet: &'static str,
    spelled_right: fn(&str) -> bool,
}

// Bytes, not chars: every accepted character is ASCII, and no byte of a longer UTF-8
// character is.
fn provider_spelling(name: &str) -> bool {
    name.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn gemini_spelling(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') && provider_spelling(name)
}

fn mcp_spelling(name: &str) -> bool {
    name.bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// Every surface the engine renders a catalog for, with its naming rule.
pub const SURFACES: &[NameRules] = &[
    NameRules {
        surface: "OpenAI",
        max_len: 64,
        alphabet: "[A-Za-z0-9_-]",
        spelled_right: provider_spelling,
    },
    NameRules {
        surface: "Anthropic",
        max_len: 64,
        alphabet: "[A-Za-z0-9_-]",
        spelled_right: provider_spelling,
    },
    NameRules {
        surface: "Mistral",
        max_len: 64,
        alphabet: "[A-Za-z0-9_-]",
        spelled_right: provider_spelling,
    },
    NameRules {
        surface: "Gemini",
        max_len: 64,
        alphabet: "[A-Za-z0-9_-], starting with a letter or `_`",
        spelled_right: gemini_spelling,
    },
    NameRules {
        surface: "MCP",
        max_len: 128,
        alphabet: "[A-Za-z0-9_.-]",
        spelled_right: mcp_spelling,
    },
];

impl NameRules {
    /// Whether this surface accepts `name`.
    pub fn accepts(&self, name: &str) -> bool {
        !name.is_empty() && name.len() <= self.max_len && (self.spelled_right)(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_separator_ends_the_namespace() {
        let wire = wire_name("acme-crm", "book__twice");
        assert_eq!(wire, "acme-crm__book__twice");
        assert_eq!(
            wire.split_once(SEPARATOR),
            Some(("acme-crm", "book__twice"))
        );
    }

    #[test]
    fn providers_refuse_colons_dots_and_long_names() {
        let openai = &SURFACES[0];
        let mcp = SURFACES
            .iter()
            .find(|rules| rules.surface == "MCP")
            .unwrap();
        assert!(openai.accepts("acme__book_appointment"));
        assert!(!openai.accepts("acme:book_appointment"));
        assert!(!openai.accepts("acme.book"));
        assert!(mcp.accepts("acme.book"));
        assert!(openai.accepts(&"a".repeat(64)));
        assert!(!openai.accepts(&"a".repeat(65)));
        assert!(mcp.accepts(&"a".repeat(128)));
        assert!(!mcp.accepts(&"a".repeat(129)));
        assert!(!openai.accepts(""));
    }
}
