//! The shapes of ids: tool and hook names, categories and namespaces.

/// The name of a `kind` (`"tool"`, `"hook"`): letters, digits, `_` and `-`, starting
/// with a letter, at most 64 characters. Every provider and MCP accept `-` in a tool
/// name, and the wire name stays reversible: the namespace before the first `__` never
/// holds `_`.
pub fn check_name(kind: &str, name: &str) -> Result<(), String> {
    let starts_with_letter = name.starts_with(|c: char| c.is_ascii_alphabetic());
    let allowed = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if starts_with_letter && allowed && name.len() <= 64 {
        Ok(())
    } else {
        Err(format!("`{name}` is not a valid {kind} name: use letters, digits, `_` and `-`, starting with a letter, at most 64 characters (set it with `name = \"...\"`)"))
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

/// A channel's name, its path segment in `/channels/<name>`: lowercase letters, digits
/// and `-`, starting with a letter, at most 32 characters, and not `api` nor `cli`.
pub fn check_channel_name(name: &str) -> Result<(), String> {
    // The engine's own ways in, as a tool's `TurnChannel` names them (engine-core's
    // `API_CHANNEL` and `CLI_CHANNEL`).
    if let Some(own) = match name {
        "api" => Some("turn route"),
        "cli" => Some("command line"),
        _ => None,
    } {
        return Err(format!("`{name}` is the channel name of the engine's own {own}, which a tool's `TurnChannel` reads: name the channel after the service it serves (`slack`, `telegram`)"));
    }
    let allowed = name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if name.starts_with(|c: char| c.is_ascii_lowercase()) && allowed && name.len() <= 32 {
        Ok(())
    } else {
        Err(format!("`{name}` is not a valid channel name: it is the path `/channels/<name>`, so use lowercase letters, digits and `-`, starting with a letter, at most 32 characters (set it with `name = \"...\"`)"))
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

/// The engine's built-in tools; in step with `BUILTIN_TOOL_NAMES` in
/// engine-core/src/builtins.rs, whose start-up check stays for hand-written descriptors.
const BUILTIN_TOOL_NAMES: &[&str] = &[
    "create_directory",
    "delete_path",
    "get_text_content",
    "list_files",
    "move_path",
    "read_path_meta",
    "write_text_content",
];

/// Namespaces kept for the engine; in step with `RESERVED_NAMESPACES` in
/// engine-core/src/builtins.rs.
const RESERVED_NAMESPACES: &[&str] = &["builtin", "engine", "mcp", "system"];

/// The package of the engine's built-in tools; in step with `BUILTIN_PACKAGE` in
/// engine-core/src/builtins.rs. It alone declares the `builtin` namespace and the built-in
/// names, with the same macros as any plugin.
const BUILTIN_PACKAGE: &str = "engine-builtins";

/// Whether the crate being compiled is the engine's built-ins (Cargo names it to rustc,
/// and so to this macro, in `CARGO_PKG_NAME`). The engine checks the same at start-up.
fn compiling_the_builtins() -> bool {
    std::env::var("CARGO_PKG_NAME").is_ok_and(|package| package == BUILTIN_PACKAGE)
}

/// A tool name that is not one of the engine's built-in tools.
pub fn check_not_builtin(name: &str) -> Result<(), String> {
    if BUILTIN_TOOL_NAMES.contains(&name) && !compiling_the_builtins() {
        Err(format!("`{name}` is the name of a built-in tool of the engine, and the model would see both: name the tool after what it does in your plugin, such as `acme_{name}` (`#[define_tool(name = \"...\")]`)"))
    } else {
        Ok(())
    }
}

/// A namespace that the engine does not keep for itself.
pub fn check_not_reserved(namespace: &str) -> Result<(), String> {
    if RESERVED_NAMESPACES.contains(&namespace)
        && !(namespace == "builtin" && compiling_the_builtins())
    {
        Err(format!(
            "the namespace `{namespace}` is kept for the engine (reserved: {}): declare another one",
            RESERVED_NAMESPACES.join(", ")
        ))
    } else {
        Ok(())
    }
}

/// The name's FNV-1a hash, the const argument that makes two items of one name in one
/// crate conflicting implementations.
pub fn name_hash(name: &str) -> u128 {
    const OFFSET: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;
    name.bytes().fold(OFFSET, |hash, byte| {
        (hash ^ u128::from(byte)).wrapping_mul(PRIME)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_engines_own_channel_names_are_refused() {
        // engine-core's `API_CHANNEL` and `CLI_CHANNEL`.
        assert!(check_channel_name("api")
            .unwrap_err()
            .contains("turn route"));
        assert!(check_channel_name("cli")
            .unwrap_err()
            .contains("command line"));
        assert!(check_channel_name("apis").is_ok());
    }
}
