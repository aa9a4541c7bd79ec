//! Catalogs with external tools: an agent's linked catalog, rendered once, with the
//! entries of its external tools added at the end of its list of tools.

use bytes::Bytes;

use super::tool::ExternalTool;
use crate::catalog;
use crate::format::Format;

/// `linked` (a catalog in `format`) with `tools` added at the end of its list. Each
/// rendering ends with its list's `]` followed by a fixed suffix, so the entries go in
/// before that suffix without parsing what is there.
pub(super) fn extend(format: Format, linked: &[u8], tools: &[&ExternalTool]) -> Bytes {
    // What follows the list's `]`: nothing; `}]` (Gemini's one `Tool`); `}` (MCP's result).
    let after_list = match format {
        Format::OpenAi | Format::Anthropic => 0,
        Format::Gemini => 2,
        Format::Mcp => 1,
    };
    let close = linked.len() - after_list - 1;
    debug_assert_eq!(linked[close], b']', "a catalog's list of tools ends there");
    let mut bytes = Vec::with_capacity(linked.len() + tools.len() * 512);
    bytes.extend_from_slice(&linked[..close]);
    let mut first = linked[close - 1] == b'[';
    for tool in tools {
        let Some(entry) = catalog::external_entry(format, &tool.catalog_entry()) else {
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
