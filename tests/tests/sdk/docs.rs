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
            "plugin-sdk/docs/guide.md",
            include_str!("../../../plugin-sdk/docs/guide.md"),
        ),
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
fn every_page_in_docs_compiles_its_snippets_as_doctests() {
    let docs = workspace().join("docs");
    let included = include_str!("../../src/lib.rs");
    let pages = markdown_in(&docs);
    assert!(pages.len() >= 2, "{pages:?}");
    for page in pages {
        let line = format!("#[doc = include_str!(\"../../docs/{page}\")]");
        assert!(
            included.contains(&line),
            "docs/{page} is not among tests/src/lib.rs's pages, so its snippets are not compiled: add `{line}`"
        );
    }
}

/// A crate's guides are its rustdoc: each `<crate>/docs/*.md` is included by a source file
/// of that crate, so docs.rs shows it and its snippets run as the crate's doctests.
#[test]
fn every_crates_guide_is_in_its_rustdoc() {
    let mut guides = 0;
    for entry in std::fs::read_dir(workspace()).unwrap() {
        let krate = entry.unwrap().path();
        let docs = krate.join("docs");
        if !krate.join("Cargo.toml").is_file() || !docs.is_dir() {
            continue;
        }
        let sources = rust_sources(&krate.join("src"));
        for page in markdown_in(&docs) {
            let include = format!("include_str!(\"../docs/{page}\")");
            // As a doc attribute (of an item, or of the crate), not any mention of it.
            let included = |source: &String| {
                source.lines().any(|line| {
                    let line = line.trim_start();
                    (line.starts_with("#[doc = ") || line.starts_with("#![doc = "))
                        && line.contains(&include)
                })
            };
            assert!(
                sources.iter().any(included),
                "{}/docs/{page} is in no rustdoc of its crate: add `#[doc = {include}]` to an item of {}/src/lib.rs",
                krate.file_name().unwrap().to_string_lossy(),
                krate.file_name().unwrap().to_string_lossy(),
            );
            guides += 1;
        }
    }
    // plugin-sdk's pages and the guides moved into the crates.
    assert!(
        guides >= 15,
        "{guides} guides found: is the walk reading the workspace?"
    );
}

fn workspace() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn markdown_in(dir: &std::path::Path) -> Vec<String> {
    let mut pages: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".md"))
        .collect();
    pages.sort();
    pages
}

/// The text of every `.rs` file under `dir`: only a crate's root includes its guides, but
/// a module may too.
fn rust_sources(dir: &std::path::Path) -> Vec<String> {
    let mut sources = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return sources;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources.extend(rust_sources(&path));
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            sources.push(std::fs::read_to_string(&path).unwrap());
        }
    }
    sources
}

/// The README's first conversation installs the llmock the tests pin, so that what a
/// newcomer runs is what the tests ran.
#[test]
fn the_readme_installs_the_llmock_the_tests_pin() {
    let pinned = include_str!("../../oracle/requirements.txt")
        .lines()
        .find(|line| line.starts_with("llmock=="))
        .expect("the tests pin llmock");
    let readme = include_str!("../../../README.md");
    assert!(
        readme.contains(&format!("pip install -q {pinned}\n")),
        "README.md does not install {pinned}"
    );
}
