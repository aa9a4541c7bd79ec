//! What the README and plugin-sdk's crate docs tell an author to write, alike.

/// The `[dependencies]` line, and the dev-dependency's, which adds the `engine` feature.
const DEPENDENCY: &str =
    r#"plugin-sdk = { path = "../plugin-sdk/plugin-sdk" }   # or { git = "<this repository>" }"#;
const DEV_DEPENDENCY: &str =
    r#"plugin-sdk = { path = "../plugin-sdk/plugin-sdk", features = ["engine"] }"#;

#[test]
fn the_readme_and_the_crate_docs_give_one_plugin_sdk_dependency_line() {
    let docs = [
        ("README.md", include_str!("../../../README.md")),
        (
            "plugin-sdk/docs/crate.md",
            include_str!("../../../plugin-sdk/docs/crate.md"),
        ),
    ];
    for (file, text) in docs {
        let lines: Vec<&str> = text
            .lines()
            .filter(|line| line.trim_start().starts_with("plugin-sdk ="))
            .collect();
        assert!(
            lines.contains(&DEPENDENCY),
            "{file} does not give the dependency line {DEPENDENCY:?}: {lines:#?}"
        );
        for line in lines {
            assert!(
                line == DEPENDENCY || line == DEV_DEPENDENCY,
                "{file} gives another plugin-sdk line than the others: {line:?}"
            );
        }
    }
}
