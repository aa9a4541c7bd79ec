//! The registry of a binary that links the two example plugins.

use acme_crm as _;
use engine_core::Registry;
use weather as _;

#[test]
fn linked_plugins_and_tools_are_collected_sorted() {
    let registry = Registry::linked();
    let listing: Vec<(&str, Vec<&str>)> = registry
        .plugins()
        .iter()
        .map(|entry| {
            (
                entry.plugin.namespace,
                entry.tools.iter().map(|tool| tool.name).collect(),
            )
        })
        .collect();
    assert_eq!(
        listing,
        [
            ("acme", vec!["book_appointment", "find_orders"]),
            ("weather", vec!["weather"])
        ]
    );
}
