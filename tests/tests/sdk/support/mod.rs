//! What several integration tests share: the linked tools, looked up by id.

pub mod oracle;

use plugin_sdk::engine::ToolDescriptor;

// Linking is installing: name each plugin crate once so the linker keeps it.
use acme_crm as _;
use sdk_tests as _;
use weather as _;

/// The linked tool with this canonical id.
pub fn tool(id: &str) -> &'static ToolDescriptor {
    plugin_sdk::engine::linked_tools()
        .find(|tool| tool.id() == id)
        .unwrap_or_else(|| panic!("no linked tool `{id}`"))
}

/// Every linked tool, sorted by id: at least the representative set of this crate's
/// fixtures and the example plugins, so that a test looping over them cannot pass by
/// finding none.
pub fn tools() -> Vec<&'static ToolDescriptor> {
    let mut tools: Vec<_> = plugin_sdk::engine::linked_tools().collect();
    tools.sort_by_key(|tool| tool.id());
    assert!(
        tools.len() >= 10,
        "the representative set is linked: {} tools",
        tools.len()
    );
    tools
}
