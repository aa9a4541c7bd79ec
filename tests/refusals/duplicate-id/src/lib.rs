//! Two tools of one plugin that both take the name `lookup`, registered by hand
//! (`#[define_tool]` refuses the second at compile time, even in another module:
//! `tests/ui/tool/two_tools_with_one_name.rs`).

test_support::hand_made_plugin!(DUP, "dup");
test_support::hand_made_tool!(DUP, "lookup");
test_support::hand_made_tool!(DUP, "lookup");
