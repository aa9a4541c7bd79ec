//! A tool that tries every way a plugin could print its secrets: a panic, an error the
//! model reads, an output, an audit record, a log line; and one that tells which secret variables
//! are left in the process environment. Only the test engine in `src/main.rs` links
//! them, never an engine image.

use plugin_sdk::prelude::*;
use serde_json::json;

plugin_sdk::plugin! { namespace = "leaks", engine = ">=0.1" }

/// Three secrets that need escaping: quotes and a backslash; control characters; text
/// that is not ASCII.
#[derive(Secrets)]
pub struct LeakSecrets {
    /// Quotes and a backslash.
    #[secret(
        label = "Quoted",
        description = "A secret with quotes and a backslash."
    )]
    pub quoted: Secret,
    /// Control characters.
    #[secret(label = "Control", description = "A secret with control characters.")]
    pub control: Secret,
    /// Text that is not ASCII.
    #[secret(label = "Unicode", description = "A secret that is not ASCII.")]
    pub unicode: Secret,
}

/// How to leak.
#[derive(Deserialize, JsonSchema, ToolArgs)]
#[serde(rename_all = "snake_case")]
pub enum Way {
    /// Panic with the secrets in the message, as written.
    Panic,
    /// Panic with the secrets `Debug`-formatted.
    DebugPanic,
    /// Fail with the secrets in the error's text, as written and `Debug`-formatted.
    Error,
    /// Record an audit event naming the secrets, in its name and its detail.
    Audit,
    /// Log the secrets through `tracing`, as fields and in the message.
    Log,
    /// Answer with the secrets in the output, as written and `Debug`-formatted (an
    /// upstream answer that quotes a key).
    Output,
}

/// What to do.
#[derive(Deserialize, JsonSchema, ToolArgs)]
pub struct Leak {
    /// How to leak.
    pub way: Way,
}

/// Print the secrets the way asked, if the engine lets it.
#[define_tool]
pub async fn leak(leak: Leak, secrets: LeakSecrets, audit: &Audit) -> Result<String, ToolError> {
    let all = [
        secrets.quoted.expose(),
        secrets.control.expose(),
        secrets.unicode.expose(),
    ];
    match leak.way {
        Way::Panic => panic!("leaked by a panic: {}", all.join(" ")),
        Way::DebugPanic => panic!("leaked by a panic: {all:?}"),
        Way::Error => Err(ToolError::new(format!(
            "leaked by an error: {} {all:?}",
            all.join(" ")
        ))),
        Way::Audit => {
            audit.record(
                &format!("leaked by an audit event: {}", all.join(" ")),
                json!({ "secrets": all, "debug": format!("{all:?}") }),
            );
            Ok("audited".to_owned())
        }
        Way::Log => {
            for secret in all {
                tracing::warn!(secret, debug = ?secret, "leaked by a log line: {secret}");
            }
            Ok("logged".to_owned())
        }
        Way::Output => Ok(format!("leaked by an output: {} {all:?}", all.join(" "))),
    }
}

/// The secret variables still in the process environment.
#[derive(Serialize, JsonSchema)]
pub struct SecretVariables {
    /// Their names.
    pub names: Vec<String>,
}

/// Tell which `ENGINE_SECRET__` variables this process's environment still holds.
#[define_tool(read_only)]
pub async fn secret_variables() -> SecretVariables {
    let names = std::env::vars_os()
        .map(|(name, _)| name.to_string_lossy().into_owned())
        .filter(|name| name.starts_with("ENGINE_SECRET__"))
        .collect();
    SecretVariables { names }
}
