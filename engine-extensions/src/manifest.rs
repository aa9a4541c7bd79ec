//! The files of the extensions directory: one JSON object each, a command tool or an
//! MCP server, read strictly (an unknown key is an error, not a silent default).

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

/// The namespace of a command tool whose file names none.
pub const DEFAULT_NAMESPACE: &str = "local";

/// The longest a command tool may run when its file does not say, and the most it may say.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
const MAX_TIMEOUT_SECS: u64 = 600;

/// The largest extension file read: a manifest is a few kilobytes.
const MAX_FILE_BYTES: u64 = 1 << 20;

/// One file's declaration.
#[derive(Debug)]
pub enum Manifest {
    /// A command tool.
    Command(CommandManifest),
    /// An MCP server.
    McpServer(McpManifest),
}

/// A command tool: run with the arguments as JSON on stdin, its result as JSON on stdout.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandManifest {
    /// The namespace of its id (`local` when absent).
    #[serde(default)]
    pub namespace: Option<String>,
    /// Its name: the id is `<namespace>:<name>`, the wire name `<namespace>__<name>`.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// A short title for people.
    #[serde(default)]
    pub summary: Option<String>,
    /// A grouping for listings.
    #[serde(default)]
    pub category: Option<String>,
    /// The JSON Schema of its arguments (an object schema).
    pub input_schema: Value,
    /// The program and its arguments; a relative program path is the file's directory's.
    pub command: Vec<String>,
    /// How long it may run, in seconds (default 30, at most 600).
    #[serde(default)]
    pub timeout_secs: Option<u64>,
    /// What of the call it is given beyond its arguments: nothing by default.
    #[serde(default)]
    pub context: Vec<Context>,
}

/// What of a call an external tool may be given beyond its arguments, once its file
/// asks (`"context": ["conversation"]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Context {
    /// The id of the call's conversation (for a call in one): a command gets it in
    /// `ENGINE_CONVERSATION_ID`, an MCP server in the call's `_meta` under
    /// `engine/conversation`.
    Conversation,
}

/// Whether `context` asks for the conversation.
pub fn knows_conversation(context: &[Context]) -> bool {
    context.contains(&Context::Conversation)
}

impl CommandManifest {
    /// Its timeout.
    pub fn timeout(&self) -> Duration {
        self.timeout_secs
            .map_or(DEFAULT_TIMEOUT, Duration::from_secs)
    }
}

/// An MCP server the engine connects to as a client; its tools are `<namespace>:<tool>`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpManifest {
    /// The namespace of its tools' ids.
    pub namespace: String,
    /// How to reach it.
    pub mcp_server: McpTransport,
    /// What of each call its tools are given beyond their arguments: nothing by default.
    #[serde(default)]
    pub context: Vec<Context>,
}

/// How the engine reaches an MCP server.
#[derive(Debug, Deserialize)]
#[serde(untagged, deny_unknown_fields)]
pub enum McpTransport {
    /// A command it starts, speaking MCP on its stdin and stdout.
    Stdio {
        /// The program and its arguments, as for a command tool.
        command: Vec<String>,
    },
    /// A streamable HTTP endpoint.
    Http {
        /// The endpoint, such as `http://127.0.0.1:8000/mcp`.
        url: String,
        /// The key in `[extensions.secrets]` of the bearer token it wants, if any.
        #[serde(default)]
        token_secret: Option<String>,
    },
}

/// Reads and parses the file at `path`; the error says what to fix.
pub fn read(path: &Path) -> Result<Manifest, String> {
    parse(&read_text(path)?)
}

/// The text of the file at `path`, opened once, without blocking (a FIFO swapped in
/// cannot hang the loader), checked to be a regular file through that handle, and read
/// no further than the size limit; the error is a phrase after "the file".
pub fn read_text(path: &Path) -> Result<String, String> {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(path)
        .map_err(|error| format!("cannot be read: {error}"))?;
    let metadata = file
        .metadata()
        .map_err(|error| format!("cannot be read: {error}"))?;
    if !metadata.is_file() {
        return Err("is not a regular file".to_owned());
    }
    let mut text = String::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|error| format!("cannot be read as UTF-8 text: {error}"))?;
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(format!(
            "is larger than the {MAX_FILE_BYTES} bytes an extension file may have"
        ));
    }
    Ok(text)
}

/// Parses a file's text: an object with `mcp_server` is an MCP server, any other a
/// command tool.
pub fn parse(text: &str) -> Result<Manifest, String> {
    let value: Value =
        serde_json::from_str(text).map_err(|error| format!("is not JSON: {error}"))?;
    let Some(object) = value.as_object() else {
        return Err("is not a JSON object; start from the template in the README".to_owned());
    };
    if object.contains_key("mcp_server") {
        let manifest: McpManifest = serde_json::from_value(value)
            .map_err(|error| format!("is not an MCP server description: {error}"))?;
        if let McpTransport::Stdio { command } = &manifest.mcp_server {
            check_command(command)?;
        }
        Ok(Manifest::McpServer(manifest))
    } else {
        let manifest: CommandManifest = serde_json::from_value(value)
            .map_err(|error| format!("is not a command tool description: {error}"))?;
        check_command(&manifest.command)?;
        if manifest
            .timeout_secs
            .is_some_and(|secs| secs == 0 || secs > MAX_TIMEOUT_SECS)
        {
            return Err(format!(
                "`timeout_secs` must be between 1 and {MAX_TIMEOUT_SECS}"
            ));
        }
        Ok(Manifest::Command(manifest))
    }
}

fn check_command(command: &[String]) -> Result<(), String> {
    match command.first() {
        Some(program) if !program.is_empty() => Ok(()),
        _ => Err("`command` must name a program: `[\"python3\", \"tool.py\"]`".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_file_reads_with_its_defaults() {
        let manifest = parse(r#"{"name": "echo", "description": "d", "input_schema": {"type": "object"}, "command": ["cat"]}"#).unwrap();
        let Manifest::Command(command) = manifest else {
            panic!("a command tool")
        };
        assert_eq!(command.namespace, None);
        assert_eq!(command.timeout(), DEFAULT_TIMEOUT);
        assert!(!knows_conversation(&command.context));
    }

    #[test]
    fn unknown_keys_and_empty_commands_are_refused_with_the_fix() {
        let typo = parse(r#"{"name": "e", "description": "d", "input_schema": {}, "command": ["cat"], "timeout": 3}"#).unwrap_err();
        assert!(typo.contains("unknown field `timeout`"), "{typo}");
        let empty =
            parse(r#"{"name": "e", "description": "d", "input_schema": {}, "command": []}"#)
                .unwrap_err();
        assert!(empty.contains("must name a program"), "{empty}");
        let long = parse(r#"{"name": "e", "description": "d", "input_schema": {}, "command": ["x"], "timeout_secs": 601}"#).unwrap_err();
        assert!(long.contains("between 1 and 600"), "{long}");
        assert!(parse("[1]").unwrap_err().contains("not a JSON object"));
        assert!(parse("{").unwrap_err().starts_with("is not JSON"));
    }

    #[test]
    fn a_file_asks_for_the_conversation_by_name_and_for_nothing_else() {
        let asks = parse(r#"{"name": "e", "description": "d", "input_schema": {}, "command": ["x"], "context": ["conversation"]}"#).unwrap();
        let Manifest::Command(command) = asks else {
            panic!("a command tool")
        };
        assert!(knows_conversation(&command.context));
        let server = parse(
            r#"{"namespace": "n", "mcp_server": {"command": ["s"]}, "context": ["conversation"]}"#,
        )
        .unwrap();
        let Manifest::McpServer(server) = server else {
            panic!("an MCP server")
        };
        assert!(knows_conversation(&server.context));
        let unknown = parse(r#"{"name": "e", "description": "d", "input_schema": {}, "command": ["x"], "context": ["secrets"]}"#).unwrap_err();
        assert!(
            unknown.contains("unknown variant `secrets`, expected `conversation`"),
            "{unknown}"
        );
    }

    #[test]
    fn an_mcp_server_is_a_command_or_a_url() {
        let stdio =
            parse(r#"{"namespace": "notes", "mcp_server": {"command": ["python3", "s.py"]}}"#)
                .unwrap();
        assert!(matches!(
            stdio,
            Manifest::McpServer(McpManifest {
                mcp_server: McpTransport::Stdio { .. },
                ..
            })
        ));
        let http = parse(r#"{"namespace": "notes", "mcp_server": {"url": "http://127.0.0.1:1/mcp", "token_secret": "t"}}"#).unwrap();
        assert!(matches!(
            http,
            Manifest::McpServer(McpManifest {
                mcp_server: McpTransport::Http { .. },
                ..
            })
        ));
        for mixed in [
            r#"{"namespace": "n", "mcp_server": {"command": ["s"], "token_secret": "t"}}"#,
            r#"{"namespace": "n", "mcp_server": {"command": ["s"], "url": "http://h/mcp"}}"#,
        ] {
            assert!(parse(mixed).is_err(), "{mixed}");
        }
        let empty = parse(r#"{"namespace": "n", "mcp_server": {"command": []}}"#).unwrap_err();
        assert!(empty.contains("must name a program"), "{empty}");
        let zero = parse(r#"{"name": "e", "description": "d", "input_schema": {}, "command": ["x"], "timeout_secs": 0}"#).unwrap_err();
        assert!(zero.contains("between 1 and 600"), "{zero}");
        let neither = parse(r#"{"namespace": "notes", "mcp_server": {"port": 3}}"#).unwrap_err();
        assert!(
            neither.contains("not an MCP server description"),
            "{neither}"
        );
    }
}
