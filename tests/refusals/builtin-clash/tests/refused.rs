//! The engine refuses a plugin tool named like a built-in tool.

use engine_core::Rule;
use refuse_builtin_clash as _;

#[test]
fn a_tool_named_like_a_builtin_stops_the_engine() {
    let error = test_support::refusal::linked_refusal();
    let [problem] = error.problems() else {
        panic!("one problem expected: {error}");
    };
    assert_eq!(problem.rule, Rule::ReservedName);
    assert_eq!(problem.tool.as_deref(), Some("drive:list_files"));
    assert_eq!(
        problem.message,
        "`list_files` is the name of a built-in tool, and the model would see both"
    );
    assert!(problem.fix.contains("acme_list_files"), "{error}");
    test_support::refusal::assert_engine_refuses(
        env!("CARGO_BIN_EXE_refuse-builtin-clash"),
        &error,
    );
}
