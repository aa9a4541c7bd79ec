//! The engine refuses two tools with one id, naming both places.

use engine_core::Rule;
use refuse_duplicate_id as _;

#[test]
fn two_tools_with_one_id_stop_the_engine() {
    let error = test_support::refusal::linked_refusal();
    let [problem] = error.problems() else {
        panic!("one problem expected: {error}");
    };
    assert_eq!(problem.rule, Rule::DuplicateId);
    assert_eq!(problem.plugin, "refuse-duplicate-id 0.1.0");
    assert_eq!(problem.tool.as_deref(), Some("dup:lookup"));
    let report = error.to_string();
    assert!(report.contains("[duplicate-id] plugin refuse-duplicate-id 0.1.0, tool `dup:lookup` (tests/refusals/duplicate-id/src/lib.rs:"), "{report}");
    // Both places: the first definition in the message, the second in the location.
    assert!(
        problem
            .message
            .contains("is also defined at tests/refusals/duplicate-id/src/lib.rs:6 "),
        "{report}"
    );
    assert_eq!(
        problem.location.map(|at| (at.file, at.line)),
        Some(("tests/refusals/duplicate-id/src/lib.rs", 7))
    );
    assert!(problem.fix.contains(r#"name = "...""#), "{report}");
    test_support::refusal::assert_engine_refuses(env!("CARGO_BIN_EXE_refuse-duplicate-id"), &error);
}
