//! The macros refuse the engine's reserved names at compile time from their own copy of
//! the lists (a proc-macro crate cannot import engine-core); this test keeps the copy in
//! step with engine-core's, which the start-up check uses.

/// The string literals of the `const NAME: &[&str] = &[...];` in `source`.
fn listed<'s>(source: &'s str, name: &str) -> Vec<&'s str> {
    let start = source
        .find(&format!("const {name}: &[&str] = &["))
        .unwrap_or_else(|| panic!("no `{name}` list"));
    let list = &source[start..];
    let list = &list[list.find("= &[").unwrap() + 4..list.find("];").unwrap()];
    list.split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(|item| item.trim_matches('"'))
        .collect()
}

#[test]
fn the_macros_refuse_the_names_the_engine_reserves() {
    let macros = include_str!("../../../plugin-sdk-macros/src/names.rs");
    assert_eq!(
        listed(macros, "BUILTIN_TOOL_NAMES"),
        engine_core::BUILTIN_TOOL_NAMES
    );
    assert_eq!(
        listed(macros, "RESERVED_NAMESPACES"),
        engine_core::RESERVED_NAMESPACES
    );
    let package = "const BUILTIN_PACKAGE: &str = \"";
    let start = macros.find(package).expect("no `BUILTIN_PACKAGE`") + package.len();
    let copy = &macros[start..start + macros[start..].find('"').unwrap()];
    assert_eq!(copy, engine_core::BUILTIN_PACKAGE);
}
