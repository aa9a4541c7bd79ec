//! The names of every attribute key, in one place (as serde_derive's `symbol.rs`): the
//! parsers match on these, and "unknown attribute" lists them.

pub const NAME: &str = "name";
pub const SUMMARY: &str = "summary";
pub const CATEGORY: &str = "category";
pub const READ_ONLY: &str = "read_only";
pub const EXCLUSIVE: &str = "exclusive";
pub const DESTRUCTIVE: &str = "destructive";
pub const IDEMPOTENT: &str = "idempotent";
pub const OPEN_WORLD: &str = "open_world";
pub const EXAMPLE: &str = "example";
pub const STRICT: &str = "strict";
pub const CRATE: &str = "crate";
pub const EVENT: &str = "event";
pub const POSITION: &str = "position";
pub const TIMEOUT_MS: &str = "timeout_ms";
pub const MUTATES_RESPONSE: &str = "mutates_response";
pub const FAIL_CLOSED: &str = "fail_closed";
pub const NAMESPACE: &str = "namespace";
pub const ENGINE: &str = "engine";
pub const DISPLAY_NAME: &str = "display_name";
pub const DESCRIPTION: &str = "description";
pub const LABEL: &str = "label";
pub const TYPE: &str = "type";
pub const CHOICES: &str = "choices";
pub const ACTION: &str = "action";
pub const API_VERSION: &str = "api_version";
pub const STATE: &str = "state";
pub const SYSTEM: &str = "system";
pub const LONG_DESCRIPTION: &str = "long_description";
pub const LONG_DESCRIPTION_FILE: &str = "long_description_file";
pub const ICON: &str = "icon";
pub const PUBLISHER: &str = "publisher";
pub const DOCUMENTATION_URL: &str = "documentation_url";
pub const OAUTH: &str = "oauth";

/// `#[define_tool(...)]`.
pub const TOOL_KEYS: &[&str] = &[
    NAME,
    SUMMARY,
    CATEGORY,
    READ_ONLY,
    DESTRUCTIVE,
    IDEMPOTENT,
    OPEN_WORLD,
    EXCLUSIVE,
    EXAMPLE,
    STRICT,
    CRATE,
];
/// `#[define_action(...)]`: a tool's keys, but those an action cannot change (its
/// annotations, strictness and exclusivity are fixed).
pub const ACTION_KEYS: &[&str] = &[NAME, SUMMARY, CATEGORY, EXAMPLE, CRATE];
/// `#[define_channel(...)]`.
pub const CHANNEL_KEYS: &[&str] = &[NAME, CRATE];
/// `#[define_hook(...)]`.
pub const HOOK_KEYS: &[&str] = &[
    EVENT,
    NAME,
    SUMMARY,
    POSITION,
    TIMEOUT_MS,
    MUTATES_RESPONSE,
    FAIL_CLOSED,
    CRATE,
];
/// `plugin! { ... }`.
pub const PLUGIN_KEYS: &[&str] = &[
    NAMESPACE,
    ENGINE,
    DISPLAY_NAME,
    DESCRIPTION,
    API_VERSION,
    STATE,
    SYSTEM,
    LONG_DESCRIPTION,
    LONG_DESCRIPTION_FILE,
    ICON,
    CATEGORY,
    PUBLISHER,
    DOCUMENTATION_URL,
    OAUTH,
    CRATE,
];
/// `#[tool_args(...)]`.
pub const TOOL_ARGS_KEYS: &[&str] = &[CRATE, STRICT, ACTION];
/// `#[secret(...)]` on the struct.
pub const SECRETS_STRUCT_KEYS: &[&str] = &[CRATE];
/// `#[secret(...)]` on a field.
pub const SECRET_FIELD_KEYS: &[&str] = &[LABEL, DESCRIPTION, TYPE, CHOICES];

/// The attribute of `#[derive(ToolArgs)]`.
pub const TOOL_ARGS: &str = "tool_args";
/// The attribute of `#[derive(Secrets)]`.
pub const SECRET: &str = "secret";
