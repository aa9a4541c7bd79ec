//! TOML errors that say where, and quote no secret.

use plugin_sdk::engine::{Redact, RedactValues};

/// A TOML error as one line: where, and toml's message without the source line it
/// would quote (the line may hold a secret, as in `crm_api_key = sk-live` left
/// unquoted). A message can still quote a value (serde's "invalid type: string ..."), so
/// every string under a `secrets` table is redacted from it, when the text parses that
/// far.
pub(super) fn toml_error(text: &str, error: &toml::de::Error) -> String {
    let message = error.message().trim_end().replace('\n', "; ");
    let at = error
        .span()
        .map(|span| {
            let start = (0..=span.start.min(text.len()))
                .rev()
                .find(|&index| text.is_char_boundary(index))
                .unwrap_or(0);
            let before = &text[..start];
            let line_start = before.rfind('\n').map_or(0, |newline| newline + 1);
            let line = before.matches('\n').count() + 1;
            let column = before[line_start..].chars().count() + 1;
            match key_before(&before[line_start..]) {
                Some(key) => format!("line {line}, column {column} (`{key}`): "),
                None => format!("line {line}, column {column}: "),
            }
        })
        .unwrap_or_default();
    let redact = RedactValues::new(secrets_in(text));
    redact.redact(&format!("{at}{message}")).into_owned()
}

/// The bare key assigned the value that starts right after `line`, as in `knowledge = `;
/// `None` when the text before the value is anything else (such as part of the value).
fn key_before(line: &str) -> Option<&str> {
    let assigned = line.trim_end().strip_suffix('=')?.trim_end();
    let key_start = assigned
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .map_or(0, |index| index + 1);
    let key = &assigned[key_start..];
    (!key.is_empty()).then_some(key)
}

/// Every string or number under a table named `secrets`, at any depth, in `text` read as
/// plain TOML; none when it does not parse.
fn secrets_in(text: &str) -> Vec<String> {
    fn collect(value: &toml::Value, in_secrets: bool, found: &mut Vec<String>) {
        match value {
            toml::Value::String(text) if in_secrets => found.push(text.clone()),
            // An unquoted number where a string belongs: serde's message quotes it.
            toml::Value::Integer(number) if in_secrets => found.push(number.to_string()),
            toml::Value::Float(number) if in_secrets => found.push(number.to_string()),
            toml::Value::Table(table) => {
                for (key, value) in table {
                    collect(value, in_secrets || key == "secrets", found);
                }
            }
            toml::Value::Array(values) => {
                for value in values {
                    collect(value, in_secrets, found);
                }
            }
            _ => {}
        }
    }
    let mut found = Vec::new();
    if let Ok(table) = text.parse::<toml::Table>() {
        collect(&toml::Value::Table(table), false, &mut found);
    }
    found
}
