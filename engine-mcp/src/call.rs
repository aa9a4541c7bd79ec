//! `tools/call` through engine-core's dispatch, and its outcome as MCP sees it.

use std::time::Duration;

use engine_core::{Call, CallError, CallErrorKind, Engine, Turn};
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock};
use rmcp::ErrorData as McpError;
use serde_json::Value;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// One `tools/call`, as a turn of the server's agent outside any conversation.
pub(crate) struct ToolsCall<'a> {
    pub engine: &'a Engine,
    pub turn: &'a Turn,
    pub timeout: Duration,
    /// Fired by rmcp on the client's `notifications/cancelled`.
    pub cancel: &'a CancellationToken,
}

impl ToolsCall<'_> {
    /// Calls the tool `request` names, stopped at the timeout or when the client cancels.
    ///
    /// A result carries the output as a text block, and, when it is an object (what
    /// MCP's `structuredContent` must be, and what the catalog gives an `outputSchema`),
    /// as `structuredContent` too. A failure the model should read (bad arguments, the
    /// tool's own error, a panic, a timeout) is an `isError` result; a tool the agent does
    /// not have is a JSON-RPC error (`-32602`, as the MCP specification has it).
    pub async fn run(&self, request: &CallToolRequestParams) -> Result<CallToolResult, McpError> {
        // rmcp hands over parsed arguments; dispatch reads JSON text, as from a provider.
        // Reading the object itself would compile every arguments type's `Deserialize`
        // a second time, for another deserializer (BENCHMARKS.md, "Compile time of a
        // 100-tool crate"): writing it back costs less per call than that costs every
        // plugin's build.
        let arguments = match &request.arguments {
            Some(arguments) => serde_json::to_string(arguments).expect("a JSON object serializes"),
            None => "{}".to_owned(),
        };
        let call = Call::new(&request.name, &arguments)
            .deadline(Instant::now() + self.timeout)
            .cancel_on(self.cancel);
        match self.engine.call(self.turn, call).await {
            Ok(output) => Ok(success(output)),
            Err(error) if error.kind() == CallErrorKind::UnknownTool => {
                Err(McpError::invalid_params(error.message().to_owned(), None))
            }
            Err(error) => Ok(failure(&error)),
        }
    }
}

fn success(output: String) -> CallToolResult {
    let structured = match serde_json::from_str::<Value>(&output) {
        Ok(value @ Value::Object(_)) => Some(value),
        _ => None,
    };
    let mut result = CallToolResult::success(vec![ContentBlock::text(output)]);
    result.structured_content = structured;
    result
}

/// The error as the model reads it on every surface: `{"error": {"kind", "message"}}`.
fn failure(error: &CallError) -> CallToolResult {
    if error.kind() == CallErrorKind::Cancelled {
        tracing::info!(
            message = error.message(),
            "a call was cancelled by the client"
        );
    }
    CallToolResult::error(vec![ContentBlock::text(error.to_json())])
}
