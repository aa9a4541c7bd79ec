//! A tool that takes the name of the engine's built-in `list_files`, registered by hand
//! (`#[define_tool]` refuses the name at compile time: `tests/ui/tool/builtin_tool_name.rs`).

test_support::hand_made_plugin!(DRIVE, "drive");
test_support::hand_made_tool!(DRIVE, "list_files");
