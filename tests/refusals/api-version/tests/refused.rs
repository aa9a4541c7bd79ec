//! The engine refuses a plugin whose action and channel API version it does not support.

use engine_core::Rule;
use refuse_api_version as _;

#[test]
fn an_unsupported_api_version_stops_the_engine() {
    let error = test_support::refusal::linked_refusal();
    let [problem] = error.problems() else {
        panic!("one problem expected: {error}");
    };
    assert_eq!(problem.rule, Rule::ApiVersion);
    assert_eq!(problem.plugin, "refuse-api-version 0.1.0");
    assert_eq!(
        problem.message,
        "the plugin is written against action and channel API version 7, and this engine supports 0"
    );
    assert!(problem.fix.contains("api_version = N"), "{error}");
    test_support::refusal::assert_engine_refuses(env!("CARGO_BIN_EXE_refuse-api-version"), &error);
}
