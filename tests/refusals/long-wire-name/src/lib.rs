//! A namespace and a tool name that are each valid but together too long for providers,
//! registered by hand (`#[define_tool]` refuses the pair at compile time:
//! `tests/ui/tool/wire_name_too_long.rs`).

test_support::hand_made_plugin!(NORTHWIND, "northwind-traders-back-office");
test_support::hand_made_tool!(NORTHWIND, "summarize_quarterly_shipments_by_region");
