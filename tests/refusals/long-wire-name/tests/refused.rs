//! The engine refuses a wire name that a provider would reject.

use engine_core::Rule;
use refuse_long_wire_name as _;

#[test]
fn a_wire_name_longer_than_providers_allow_stops_the_engine() {
    let error = test_support::refusal::linked_refusal();
    let [problem] = error.problems() else {
        panic!("one problem expected: {error}");
    };
    assert_eq!(problem.rule, Rule::WireName);
    assert_eq!(
        problem.message,
        "the wire name `northwind-traders-back-office__summarize_quarterly_shipments_by_region` (70 characters) is refused: \
         OpenAI allows [A-Za-z0-9_-], at most 64; Anthropic allows [A-Za-z0-9_-], at most 64; \
         Mistral allows [A-Za-z0-9_-], at most 64; Gemini allows [A-Za-z0-9_-], starting with a letter or `_`, at most 64"
    );
    test_support::refusal::assert_engine_refuses(
        env!("CARGO_BIN_EXE_refuse-long-wire-name"),
        &error,
    );
}
