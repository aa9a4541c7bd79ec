//! The engine re-checks every strict schema and refuses one that is not.

use engine_core::Rule;
use refuse_non_strict_schema as _;

#[test]
fn a_schema_that_fails_the_strict_recheck_stops_the_engine() {
    let error = test_support::refusal::linked_refusal();
    let [problem] = error.problems() else {
        panic!("one problem expected: {error}");
    };
    assert_eq!(problem.rule, Rule::StrictSchema);
    assert_eq!(problem.tool.as_deref(), Some("labels:tag"));
    assert!(
        problem
            .message
            .starts_with("the arguments schema is not strict: at /properties/labels"),
        "{error}"
    );
    assert!(problem.fix.contains("strict = false"), "{error}");
    test_support::refusal::assert_engine_refuses(
        env!("CARGO_BIN_EXE_refuse-non-strict-schema"),
        &error,
    );
}
