//! The shapes of ids: tool and hook names, categories and namespaces.

/// The name of a `kind` (`"tool"`, `"hook"`): letters, digits and `_`, starting with a
/// letter, at most 64 characters.
pub fn check_name(kind: &str, name: &str) -> Result<(), String> {
    let starts_with_letter = name.starts_with(|c: char| c.is_ascii_alphabetic());
    let allowed = name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if starts_with_letter && allowed && name.len() <= 64 {
        Ok(())
    } else {
        Err(format!("`{name}` is not a valid {kind} name: use letters, digits and `_`, starting with a letter, at most 64 characters (set it with `name = \"...\"`)"))
    }
}

/// Lowercase letters, digits and `-`: an id such as `crm` or `e-mail`, not text.
pub fn check_category(category: &str) -> Result<(), String> {
    let allowed = category
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !category.is_empty() && allowed {
        Ok(())
    } else {
        Err(format!("`{category}` is not a category id: use lowercase letters, digits and `-`, such as `crm` or `e-mail` (it is an id, not text)"))
    }
}

/// Kebab-case, at most 32 characters: `acme`, `acme-crm`.
pub fn check_namespace(namespace: &str) -> Result<(), String> {
    let words_ok = namespace.split('-').all(|word| {
        !word.is_empty()
            && word
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
    });
    if words_ok && namespace.starts_with(|c: char| c.is_ascii_lowercase()) && namespace.len() <= 32
    {
        Ok(())
    } else {
        Err(format!("`{namespace}` is not a valid namespace: use kebab-case (lowercase words joined by `-`, starting with a letter), at most 32 characters, such as `acme-crm`"))
    }
}
