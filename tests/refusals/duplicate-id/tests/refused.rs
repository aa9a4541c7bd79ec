//! The engine refuses two tools with one id, naming both places.

#[path = "../../engine_process.rs"]
mod engine_process;

use engine_core::{Registry, Rule};
use refuse_duplicate_id as _;

#[test]
fn two_tools_with_one_id_stop_the_engine() {
    let error = Registry::linked()
        .err()
        .expect("the engine must refuse this plugin");
    let [problem] = error.problems() else {
        panic!("one problem expected: {error}");
    };
    assert_eq!(problem.rule, Rule::DuplicateId);
    assert_eq!(problem.plugin, "refuse-duplicate-id 0.1.0");
    assert_eq!(problem.tool.as_deref(), Some("dup:lookup"));
    let report = error.to_string();
    assert!(report.contains("[duplicate-id] plugin refuse-duplicate-id 0.1.0, tool `dup:lookup` (tests/refusals/duplicate-id/src/lib.rs:"), "{report}");
    assert!(
        problem
            .message
            .contains("is also defined at tests/refusals/duplicate-id/src/lib.rs:"),
        "{report}"
    );
    assert!(problem.fix.contains(r#"name = "...""#), "{report}");
    engine_process::assert_engine_refuses(env!("CARGO_BIN_EXE_refuse-duplicate-id"), &error);
}
