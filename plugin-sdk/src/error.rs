//! The error a tool call ends with, in words the model can act on.

use std::fmt;

/// Why a tool call did not produce a result.
///
/// The message is read by the model, so say what went wrong and what to try instead.
/// Any `std::error::Error` converts into a [`ToolErrorKind::Failed`] error with `?`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolError {
    kind: ToolErrorKind,
    message: String,
}

/// What kind of failure a [`ToolError`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolErrorKind {
    /// The arguments did not match the tool's schema (bad JSON, a wrong type, a missing field).
    InvalidArguments,
    /// The tool ran and reported a failure.
    Failed,
    /// The tool's output could not be serialized.
    Output,
}

impl ToolError {
    /// A failure reported by the tool itself.
    pub fn new(message: impl Into<String>) -> Self {
        Self::with_kind(ToolErrorKind::Failed, message)
    }

    /// Arguments that do not fit the tool's schema.
    pub fn invalid_arguments(message: impl Into<String>) -> Self {
        Self::with_kind(ToolErrorKind::InvalidArguments, message)
    }

    /// An error of the given kind.
    pub fn with_kind(kind: ToolErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> ToolErrorKind {
        self.kind
    }

    /// The message, for the model.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

// `ToolError` deliberately does not implement `std::error::Error`, so that this blanket
// conversion does not overlap `From<T> for T` (the pattern anyhow uses).
impl<E: std::error::Error> From<E> for ToolError {
    fn from(error: E) -> Self {
        let mut message = error.to_string();
        let mut source = error.source();
        while let Some(cause) = source {
            message.push_str(": ");
            message.push_str(&cause.to_string());
            source = cause.source();
        }
        Self::new(message)
    }
}
