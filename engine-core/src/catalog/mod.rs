//! Tool catalogs: one canonical definition, rendered once per provider to bytes.
//!
//! Each catalog is the JSON value that provider's request takes in its `tools` field
//! (for MCP, the `tools/list` result), rendered on first use and kept: serving one
//! copies no JSON. Start-up renders none: an agent talks to one provider, so most of an
//! engine's catalogs are never asked for (MCP's is rendered once per distinct set of
//! titles). Start-up still checks that Gemini can take every schema.

mod anthropic;
mod mcp;
mod openai;

use std::collections::HashMap;
use std::sync::{OnceLock, RwLock};

use bytes::Bytes;
use serde::Serialize;
use serde_json::value::RawValue;

use crate::format::Format;
use crate::tool::Tool;

/// The rendered catalogs of a registry.
#[derive(Default)]
pub(crate) struct Catalogs {
    openai: OnceLock<Bytes>,
    anthropic: OnceLock<Bytes>,
    /// Its declarations are a conversion of every schema.
    gemini: OnceLock<Bytes>,
    /// MCP renderings, keyed by the summaries a locale resolves to (see [`mcp::TitleKey`]),
    /// so that the cache holds one entry per distinct rendering however many locale tags
    /// clients send.
    mcp: RwLock<HashMap<mcp::TitleKey, Bytes>>,
}

fn render_openai(tools: &[&Tool]) -> Bytes {
    let openai: Vec<_> = tools.iter().map(|tool| openai::tool(tool)).collect();
    to_bytes(&openai)
}

fn render_anthropic(tools: &[&Tool]) -> Bytes {
    let anthropic: Vec<_> = tools.iter().map(|tool| anthropic::tool(tool)).collect();
    to_bytes(&anthropic)
}

/// Gemini's `tools` entry for `tools`, which passed validation (so Gemini takes each).
fn render_gemini(tools: &[&Tool]) -> Bytes {
    let declarations: Vec<_> = tools.iter().map(|tool| tool.gemini_declaration()).collect();
    to_bytes(&[GeminiTool {
        function_declarations: declarations.iter().map(|text| &**text).collect(),
    }])
}

/// MCP's `tools/list`: only the tools offered outside a conversation, since an MCP
/// session has none.
fn render_mcp(tools: &[&Tool], locale: &str) -> Bytes {
    let tools = tools
        .iter()
        .filter(|tool| !tool.needs_conversation())
        .map(|tool| mcp::tool(tool, locale))
        .collect();
    to_bytes(&McpToolsList { tools })
}

impl Catalogs {
    /// The catalog in `format` for a reader of `locale`, of the `tools` these catalogs
    /// are for: asked for only to render one not rendered yet (MCP's, once per
    /// distinct set of titles).
    pub(crate) fn get<'t>(
        &self,
        format: Format,
        locale: &str,
        tools: impl FnOnce() -> Vec<&'t Tool>,
    ) -> Bytes {
        match format {
            Format::OpenAi => self.openai.get_or_init(|| render_openai(&tools())).clone(),
            Format::Anthropic => self
                .anthropic
                .get_or_init(|| render_anthropic(&tools()))
                .clone(),
            Format::Gemini => self.gemini.get_or_init(|| render_gemini(&tools())).clone(),
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

/// What a catalog shows of a tool that is not linked (an external one): its schema as
/// written, never rewritten, and `strict` always said.
pub(crate) struct ExternalEntry<'a> {
    pub(crate) wire_name: &'a str,
    pub(crate) description: &'a str,
    /// MCP's title.
    pub(crate) summary: &'a str,
    /// The input schema as JSON text, and as a value (for Gemini's conversion).
    pub(crate) input: &'a RawValue,
    pub(crate) input_schema: &'a serde_json::Value,
    /// Whether strict mode takes the schema as it is.
    pub(crate) strict: bool,
}

/// An external tool's entry in a catalog of `format`, as JSON text; none for Gemini when
/// its schema is outside Gemini's subset (the listing says so).
pub(crate) fn external_entry(format: Format, tool: &ExternalEntry<'_>) -> Option<Box<RawValue>> {
    fn json(entry: &impl Serialize) -> Box<RawValue> {
        serde_json::value::to_raw_value(entry).expect("catalog entries have string keys only")
    }
    match format {
        Format::OpenAi => Some(json(&openai::external(tool))),
        Format::Anthropic => Some(json(&anthropic::external(tool))),
        Format::Mcp => Some(json(&mcp::external(tool))),
        Format::Gemini => {
            crate::gemini::declaration(tool.wire_name, tool.description, tool.input_schema).ok()
        }
    }
}

/// `linked` (a catalog in `format`) with `entries` (external or dev session tools) added
/// at the end of its list. Each rendering ends with its list's `]` followed by a fixed
/// suffix, so the entries go in before that suffix without parsing what is there.
pub(crate) fn extend(format: Format, linked: &[u8], entries: &[ExternalEntry<'_>]) -> Bytes {
    // What follows the list's `]`: nothing; `}]` (Gemini's one `Tool`); `}` (MCP's result).
    let after_list = match format {
        Format::OpenAi | Format::Anthropic => 0,
        Format::Gemini => 2,
        Format::Mcp => 1,
    };
    let close = linked.len() - after_list - 1;
    debug_assert_eq!(linked[close], b']', "a catalog's list of tools ends there");
    let mut bytes = Vec::with_capacity(linked.len() + entries.len() * 512);
    bytes.extend_from_slice(&linked[..close]);
    let mut first = linked[close - 1] == b'[';
    for entry in entries {
        let Some(entry) = external_entry(format, entry) else {
            continue;
        };
        if !first {
            bytes.push(b',');
        }
        first = false;
        bytes.extend_from_slice(entry.get().as_bytes());
    }
    bytes.extend_from_slice(&linked[close..]);
    Bytes::from(bytes)
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
