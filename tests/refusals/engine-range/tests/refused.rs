//! The engine refuses a plugin whose `engine` range it does not satisfy.

use engine_core::{Rule, ENGINE_VERSION};
use refuse_engine_range as _;

#[test]
fn an_unsupported_engine_range_stops_the_engine() {
    let error = test_support::refusal::linked_refusal();
    let [problem] = error.problems() else {
        panic!("one problem expected: {error}");
    };
    assert_eq!(problem.rule, Rule::EngineVersion);
    assert_eq!(problem.plugin, "refuse-engine-range 0.1.0");
    assert_eq!(problem.tool, None);
    assert_eq!(
        problem.message,
        format!("the plugin needs engine `>=2, <3`, and this engine is {ENGINE_VERSION}")
    );
    test_support::refusal::assert_engine_refuses(env!("CARGO_BIN_EXE_refuse-engine-range"), &error);
}
