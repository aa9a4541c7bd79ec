//! The compile-fail suite: one file per author mistake under `ui/<area>/`, each with the
//! `.stderr` it must produce. `TRYBUILD=overwrite` rewrites the `.stderr` files (refused
//! under CI): read the diff.
//!
//! Only compile-fail cases here: trybuild then checks them all in one `cargo check
//! --keep-going`, where a single pass case would make it build (codegen included) every
//! case one after another. The cases that must compile are test targets of their own
//! (`ui-pass/`, in Cargo.toml), built with the workspace's other tests.

#[test]
fn author_mistakes_fail_to_compile_with_a_message_that_says_the_fix() {
    // trybuild reads `TRYBUILD` itself; this only refuses it under CI.
    test_support::overwrite_requested("TRYBUILD");
    trybuild::TestCases::new().compile_fail("ui/*/*.rs");
}
