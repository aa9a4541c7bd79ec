//! The compile-fail suite: one file per author mistake under `ui/<area>/`, each with the
//! `.stderr` it must produce, and the cases that must compile under `ui-pass/`.
//! `TRYBUILD=overwrite` rewrites the `.stderr` files (refused under CI): read the diff.

#[test]
fn author_mistakes_fail_to_compile_with_a_message_that_says_the_fix() {
    // trybuild reads `TRYBUILD` itself; this only refuses it under CI.
    test_support::overwrite_requested("TRYBUILD");
    let cases = trybuild::TestCases::new();
    cases.compile_fail("ui/*/*.rs");
    cases.pass("ui-pass/*.rs");
}
