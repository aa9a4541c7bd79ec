//! The engine refuses two tools that would share a wire name.

use engine_core::Rule;
use refuse_wire_collision as _;

#[test]
fn two_tools_with_one_wire_name_stop_the_engine() {
    let error = test_support::refusal::linked_refusal();
    let [problem] = error.problems() else {
        panic!("one problem expected: {error}");
    };
    assert_eq!(problem.rule, Rule::WireNameCollision);
    assert_eq!(problem.plugin, "hand-made-registration 0.0.1");
    assert_eq!(problem.tool.as_deref(), Some("shop__cart:add"));
    assert_eq!(
        problem.message,
        "its wire name `shop__cart__add` is also the wire name of `shop:cart__add` (refuse-wire-collision), so a call could not tell them apart"
    );
    test_support::refusal::assert_engine_refuses(
        env!("CARGO_BIN_EXE_refuse-wire-collision"),
        &error,
    );
}
