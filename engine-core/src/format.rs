//! The formats the engine speaks: a catalog's rendering ([`Format`]) and a provider's
//! wire ([`Wire`]), named the same in the configuration and on the command line.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A catalog rendering.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// OpenAI chat completions: `[{"type": "function", "function": {...}}]`.
    OpenAi,
    /// Anthropic messages: `[{"name", "description", "input_schema"}]`.
    Anthropic,
    /// Gemini: `[{"functionDeclarations": [...]}]`, in its OpenAPI schema subset.
    Gemini,
    /// MCP: the `tools/list` result, `{"tools": [...]}`.
    Mcp,
}

impl Format {
    /// Every format, in the order the command line lists them.
    pub const ALL: [Format; 4] = [Self::OpenAi, Self::Anthropic, Self::Gemini, Self::Mcp];

    /// The format's name on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OpenAi => "openai",
            Self::Anthropic => "anthropic",
            Self::Gemini => "gemini",
            Self::Mcp => "mcp",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// A catalog format's name that is none of [`Format::ALL`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown catalog format `{0}`: use openai, anthropic, gemini or mcp")]
pub struct UnknownFormat(pub String);

impl FromStr for Format {
    type Err = UnknownFormat;

    fn from_str(text: &str) -> Result<Self, UnknownFormat> {
        Self::ALL
            .into_iter()
            .find(|format| format.as_str() == text)
            .ok_or_else(|| UnknownFormat(text.to_owned()))
    }
}

/// The wire formats the engine speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Wire {
    /// OpenAI-compatible chat completions (`/chat/completions`): OpenAI, and the many
    /// servers and gateways that copy it.
    Openai,
    /// Anthropic's Messages API (`/v1/messages`).
    Anthropic,
}

impl Wire {
    /// The name provider fields are kept under in the history.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Openai => "openai",
            Self::Anthropic => "anthropic",
        }
    }

    /// The catalog format its tools are offered in.
    pub fn format(self) -> Format {
        match self {
            Self::Openai => Format::OpenAi,
            Self::Anthropic => Format::Anthropic,
        }
    }
}
