//! A plugin's view of plugin-sdk: what spec 036 says a plugin is never given stays out of
//! reach of a crate that depends on plugin-sdk as a plugin does (without the `engine`
//! feature). `TRYBUILD=overwrite` rewrites the `.stderr` files (refused under CI).

#[test]
fn a_plugin_cannot_list_or_call_other_tools_nor_build_an_unredacted_logger() {
    // As test-support's `overwrite_requested`, which this crate cannot depend on (it
    // enables the feature these cases must not see): CI only ever reads `.stderr` files.
    let overwrite = std::env::var_os("TRYBUILD").is_some_and(|value| !value.is_empty());
    assert!(
        !(overwrite && std::env::var_os("CI").is_some()),
        "TRYBUILD is set under CI, where expected output is only read"
    );
    trybuild::TestCases::new().compile_fail("ui/*.rs");
}
