//! Tool catalogs: one canonical definition, rendered once per provider to bytes.
//!
//! Each catalog is the JSON value that provider's request takes in its `tools` field
//! (for MCP, the `tools/list` result). The model-facing catalogs are in English and are
//! rendered at start-up; MCP's carries a title for people, so it is rendered at start-up
//! for `en-US` and for any other locale on first use, and kept.

mod anthropic;
pub(crate) mod gemini;
mod mcp;
mod openai;

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;
use std::sync::RwLock;

use bytes::Bytes;
use serde::Serialize;
use serde_json::value::RawValue;

use crate::parallel;
use crate::registry::{Registry, Tool};
use crate::validate::{Problem, Rule};

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

impl FromStr for Format {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|format| format.as_str() == text)
            .ok_or_else(|| {
                format!("unknown catalog format `{text}`: use openai, anthropic, gemini or mcp")
            })
    }
}

/// The rendered catalogs of a registry.
pub(crate) struct Catalogs {
    openai: Bytes,
    anthropic: Bytes,
    gemini: Bytes,
    /// MCP renderings, keyed by the summaries a locale resolves to (see [`mcp::TitleKey`]),
    /// so that the cache holds one entry per distinct rendering however many locale tags
    /// clients send.
    mcp: RwLock<HashMap<mcp::TitleKey, Bytes>>,
}

impl Catalogs {
    /// Renders the model-facing catalogs of `tools`; a tool Gemini cannot take is a
    /// problem.
    pub(crate) fn render(tools: &[&Tool], problems: &mut Vec<Problem>) -> Self {
        let mut gemini = Vec::with_capacity(tools.len());
        for tool in tools {
            match tool.gemini_declaration() {
                Ok(declaration) => gemini.push(declaration),
                Err(reason) => problems.push(Problem::tool(
                    Rule::GeminiSchema,
                    tool,
                    format!("Gemini cannot take the arguments schema: {reason}"),
                    "make the arguments type non-recursive (a fixed number of levels, each its own struct)".into(),
                )),
            }
        }
        let ((openai, anthropic), (gemini, mcp)) = parallel::join(
            || {
                let openai: Vec<_> = tools.iter().map(|tool| openai::tool(tool)).collect();
                let anthropic: Vec<_> = tools.iter().map(|tool| anthropic::tool(tool)).collect();
                (to_bytes(&openai), to_bytes(&anthropic))
            },
            || {
                let gemini = to_bytes(&[GeminiTool {
                    function_declarations: gemini,
                }]);
                let key = mcp::TitleKey::new(tools, DEFAULT_LOCALE);
                (gemini, (key, render_mcp(tools, DEFAULT_LOCALE)))
            },
        );
        Self {
            openai,
            anthropic,
            gemini,
            mcp: RwLock::new(HashMap::from([mcp])),
        }
    }
}

/// The locale whose MCP catalog is rendered at start-up; others are rendered on first use.
const DEFAULT_LOCALE: &str = "en-US";

fn render_mcp(tools: &[&Tool], locale: &str) -> Bytes {
    let tools = tools.iter().map(|tool| mcp::tool(tool, locale)).collect();
    to_bytes(&McpToolsList { tools })
}

impl Catalogs {
    /// The catalog in `format` for a reader of `locale`, of the `tools` these catalogs
    /// were rendered for (only MCP's needs them, to render another locale).
    pub(crate) fn get<'t>(
        &self,
        format: Format,
        locale: &str,
        tools: impl FnOnce() -> Vec<&'t Tool>,
    ) -> Bytes {
        match format {
            Format::OpenAi => self.openai.clone(),
            Format::Anthropic => self.anthropic.clone(),
            Format::Gemini => self.gemini.clone(),
            Format::Mcp => {
                let tools = tools();
                let key = mcp::TitleKey::new(&tools, locale);
                let rendered = self
                    .mcp
                    .read()
                    .ok()
                    .and_then(|cache| cache.get(&key).cloned());
                rendered.unwrap_or_else(|| {
                    let bytes = render_mcp(&tools, locale);
                    // A poisoned lock only means another renderer panicked; serve uncached.
                    if let Ok(mut cache) = self.mcp.write() {
                        cache.insert(key, bytes.clone());
                    }
                    bytes
                })
            }
        }
    }
}

impl Registry {
    /// The catalog of every linked tool in `format`, for a reader of `locale` (only
    /// MCP's depends on it). An agent's catalog leaves out the tools it does not equip:
    /// see [`Agent::catalog`](crate::Agent::catalog).
    ///
    /// The bytes are rendered once and shared: serving a catalog copies no JSON.
    pub fn catalog(&self, format: Format, locale: &str) -> Bytes {
        self.catalogs
            .get(format, locale, || self.tools().iter().collect())
    }
}

/// Gemini's `Tool`: the declarations travel in one entry of the request's `tools`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GeminiTool<'a> {
    function_declarations: Vec<&'a RawValue>,
}

/// MCP's `tools/list` result.
#[derive(Serialize)]
struct McpToolsList<'a> {
    tools: Vec<mcp::McpTool<'a>>,
}

/// Serializes a catalog straight from the registry's schemas, borrowed, not cloned.
fn to_bytes(catalog: &impl Serialize) -> Bytes {
    let mut bytes = Vec::with_capacity(64 * 1024);
    serde_json::to_writer(&mut bytes, catalog).expect("catalogs have string keys only");
    Bytes::from(bytes)
}
