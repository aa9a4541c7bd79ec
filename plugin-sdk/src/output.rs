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
pub trait ToolOutput {
    /// The output schema, in the canonical form.
    fn output_schema() -> schemars::Schema;

    /// The output as JSON text.
    fn to_json(&self) -> Result<String, ToolError>;
}

// The bounds sit on the impl, not the trait, so that an output without them is reported
// as "cannot be the output of a tool" rather than as each missing trait.
#[diagnostic::do_not_recommend]
impl<T: Serialize + JsonSchema> ToolOutput for T {
    fn output_schema() -> schemars::Schema {
        crate::schema::output_schema_for::<T>()
    }

    fn to_json(&self) -> Result<String, ToolError> {
        serde_json::to_string(self).map_err(|error| {
            let message = format!("the tool's output could not be serialized: {error}");
            ToolError::with_kind(crate::ToolErrorKind::Output, message)
        })
    }
}

/// A `Result` a tool returns, split into its success type and a [`ToolError`].
#[diagnostic::on_unimplemented(
    message = "the error type of `{Self}` does not convert into `ToolError`",
    label = "a tool returns `T`, or `Result<T, E>` with `E: Into<ToolError>`",
    note = "return `Result<T, ToolError>`, or implement `From<YourError> for ToolError` (`ToolError::new(error.to_string())` keeps the message)"
)]
pub trait IntoToolResult {
    /// The success type, the tool's output.
    type Output;

    /// The result, with its error converted.
    fn into_tool_result(self) -> Result<Self::Output, ToolError>;
}

#[diagnostic::do_not_recommend]
impl<T, E: Into<ToolError>> IntoToolResult for Result<T, E> {
    type Output = T;

    fn into_tool_result(self) -> Result<T, ToolError> {
        self.map_err(Into::into)
    }
}
