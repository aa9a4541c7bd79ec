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
        ("docs/authors.md", include_str!("../../../docs/authors.md")),
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

#[test]
fn every_guide_in_docs_compiles_its_snippets_as_doctests() {
    let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs");
    let included = include_str!("../../src/lib.rs");
    let mut guides: Vec<String> = std::fs::read_dir(&docs)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".md"))
        .collect();
    guides.sort();
    assert!(guides.len() >= 10, "{guides:?}");
    for guide in guides {
        let line = format!("#[doc = include_str!(\"../../docs/{guide}\")]");
        assert!(
            included.contains(&line),
            "docs/{guide} is not among tests/src/lib.rs's guides, so its snippets are not compiled: add `{line}`"
        );
    }
}
