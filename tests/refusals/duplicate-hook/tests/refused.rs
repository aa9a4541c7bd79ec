//! The engine refuses two hooks with one id, even at different events.

use engine_core::Rule;
use refuse_duplicate_hook as _;

#[test]
fn two_hooks_with_one_id_stop_the_engine() {
    let error = test_support::refusal::linked_refusal();
    let [problem] = error.problems() else {
        panic!("one problem expected: {error}");
    };
    assert_eq!(problem.rule, Rule::DuplicateId);
    assert_eq!(problem.plugin, "refuse-duplicate-hook 0.1.0");
    assert_eq!(problem.hook.as_deref(), Some("dup-hook:screen"));
    assert_eq!(problem.tool, None);
    let report = error.to_string();
    assert!(report.contains("[duplicate-id] plugin refuse-duplicate-hook 0.1.0, hook `dup-hook:screen` (tests/refusals/duplicate-hook/src/lib.rs:"), "{report}");
    // Both places: the first definition in the message, the second in the location.
    assert!(
        problem
            .message
            .contains("is also defined at tests/refusals/duplicate-hook/src/lib.rs:6 "),
        "{report}"
    );
    assert_eq!(
        problem.location.map(|at| (at.file, at.line)),
        Some(("tests/refusals/duplicate-hook/src/lib.rs", 7))
    );
    assert!(problem.fix.contains(r#"name = "...""#), "{report}");
    test_support::refusal::assert_engine_refuses(
        env!("CARGO_BIN_EXE_refuse-duplicate-hook"),
        &error,
    );
}
