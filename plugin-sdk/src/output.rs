//! What a tool returns: `T` or `Result<T, E>` with `E: Into<ToolError>`.

use schemars::JsonSchema;
use serde::Serialize;

use crate::ToolError;

/// A type a tool can return: serialized to JSON for the model, with its schema as the
/// tool's output schema.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the output of a tool",
    label = "this output needs `Serialize` and `JsonSchema`",
    note = "a tool returns `T` or `Result<T, ToolError>` where `T` has `#[derive(Serialize, JsonSchema)]`"
)]
pub trait ToolOutput: Serialize + JsonSchema {}

#[diagnostic::do_not_recommend]
impl<T: Serialize + JsonSchema> ToolOutput for T {}

/// A `Result` a tool returns, split into its success type and a [`ToolError`].
pub trait IntoToolResult {
    /// The success type, the tool's output.
    type Output;

    /// The result, with its error converted.
    fn into_tool_result(self) -> Result<Self::Output, ToolError>;
}

impl<T, E: Into<ToolError>> IntoToolResult for Result<T, E> {
    type Output = T;

    fn into_tool_result(self) -> Result<T, ToolError> {
        self.map_err(Into::into)
    }
}
