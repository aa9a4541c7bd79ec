//! What a tool receives from the engine besides its arguments.

/// The context of one tool call.
///
/// Take it as `ctx: &ToolContext`. The engine creates one per call; it gives a tool no
/// more power than a built-in tool has (no model client, registry or database handle).
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct ToolContext {
    locale: Option<String>,
}

impl ToolContext {
    /// A context for a call outside any conversation (tests, the command line).
    pub fn new() -> Self {
        Self::default()
    }

    /// The same context, for a reader of `locale` (a BCP 47 tag).
    pub fn with_locale(mut self, locale: impl Into<String>) -> Self {
        self.locale = Some(locale.into());
        self
    }

    /// The locale of the person the turn is for, when the engine knows it.
    pub fn locale(&self) -> Option<&str> {
        self.locale.as_deref()
    }
}
