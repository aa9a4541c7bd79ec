//! Two hooks of one plugin that both take the name `screen`, at different events,
//! registered by hand (`#[define_hook]` refuses the second at compile time:
//! `tests/ui/hook/two_hooks_with_one_name.rs`).

test_support::hand_made_plugin!(DUP_HOOK, "dup-hook");
test_support::hand_made_hook!(DUP_HOOK, "screen", message_received);
test_support::hand_made_hook!(DUP_HOOK, "screen", response_sent);
