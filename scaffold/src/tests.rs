//! The scaffold's unit tests: plugin specs, names, and the files it writes.

use super::*;

#[test]
fn plugin_specs_name_a_registry_version_a_path_or_a_git_repository() {
    assert_eq!(
        Plugin::parse("weather@0.1").unwrap().source,
        Source::Registry("0.1".into())
    );
    assert_eq!(
        Plugin::parse("notes=git:https://example.com/notes#v2")
            .unwrap()
            .source,
        Source::Git {
            url: "https://example.com/notes".into(),
            rev: Some("v2".into())
        }
    );
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let acme = examples.join("plugins/acme-crm");
    assert!(matches!(
        Plugin::parse(&format!("acme-crm=path:{}", acme.display())).unwrap().source,
        Source::Path(dir) if dir.is_absolute()
    ));
    for wrong in [
        "weather",
        "weather@",
        "we ather@1",
        "engine-cli@1",
        "engine_cli@1",
        "engine@1",
        "x=ftp:y",
        "1x@1",
    ] {
        assert!(Plugin::parse(wrong).is_err(), "{wrong}");
    }
}

#[test]
fn a_path_plugin_must_be_the_crate_it_names() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let refused = |spec: String| Plugin::parse(&spec).unwrap_err();
    let acme = workspace.join("examples/plugins/acme-crm");
    assert!(Plugin::parse(&format!("acme-crm=path:{}", acme.display())).is_ok());
    // A plugin that names plugin-sdk otherwise (`sdk = { package = "plugin-sdk" }`).
    let renamed = workspace.join("tests/renamed");
    assert!(Plugin::parse(&format!("renamed-sdk-user=path:{}", renamed.display())).is_ok());
    for wrong in ["crm", "acme_crm"] {
        let error = refused(format!("{wrong}=path:{}", acme.display()));
        assert!(
            error.ends_with(&format!(
                "the crate there is `acme-crm`: write `--plugin acme-crm=path:{}`",
                acme.display()
            )),
            "{error}"
        );
    }
    let error = refused(format!(
        "nowhere=path:{}",
        workspace.join("nowhere").display()
    ));
    assert!(error.contains("holds no readable Cargo.toml"), "{error}");
    let error = refused(format!("main=path:{}", workspace.display()));
    assert!(error.contains("is a workspace, not a package"), "{error}");
}

#[test]
fn a_plugin_given_twice_is_refused_whatever_its_dashes() {
    let plugins = [
        Plugin::parse("acme-crm@1").unwrap(),
        Plugin::parse("acme_crm@2").unwrap(),
    ];
    assert_eq!(
        distinct(&plugins).unwrap_err(),
        "the plugin `acme_crm` is given twice"
    );
    assert!(distinct(&plugins[..1]).is_ok());
}

#[test]
fn backend_flags_become_the_engine_dependencys_only_features_in_the_image_manifest() {
    let args = Args::try_parse_from([
        "new-image",
        "--name",
        "support-engine",
        "--out",
        "/nonexistent/support-engine",
        "--plugin",
        "weather@1",
        "--backend",
        "postgres",
    ])
    .expect("the flags parse");
    let (_, manifest) = files(&args)
        .into_iter()
        .find(|(name, _)| *name == "Cargo.toml")
        .expect("a manifest is written");
    let manifest: toml::Table = manifest.parse().expect("the manifest is TOML");
    let engine = &manifest["dependencies"]["engine"];
    assert_eq!(
        engine["default-features"].as_bool(),
        Some(false),
        "{engine}"
    );
    assert_eq!(
        engine["features"].as_array().map(|features| features
            .iter()
            .filter_map(toml::Value::as_str)
            .collect::<Vec<_>>()),
        Some(vec!["postgres"]),
        "{engine}"
    );
}

#[test]
fn an_engine_path_must_be_the_engines_workspace() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    assert!(engine_source(&format!("path:{}", workspace.display())).is_ok());
    // The flag's meaning before the `engine` crate: engine-cli's own directory.
    let engine_cli = workspace.join("engine-cli");
    let refused = engine_source(&format!("path:{}", engine_cli.display())).unwrap_err();
    assert!(
        refused.contains("give the directory of the engine's workspace"),
        "{refused}"
    );
    assert!(engine_source("git:https://example.com/engine#v1").is_ok());
}

#[test]
fn the_engine_dependency_turns_on_the_backends_named_and_no_default() {
    let engine = Source::Path("/src/engine-workspace".into());
    assert_eq!(
        engine_dependency(&engine, &[]),
        "{ path = \"/src/engine-workspace/engine\", default-features = false, features = [\"sqlite\", \"http\"] }"
    );
    let git = Source::Git {
        url: "https://example.com/engine".into(),
        rev: Some("v1".into()),
    };
    assert_eq!(
        engine_dependency(&git, &[Backend::Http, Backend::Postgres, Backend::Http]),
        "{ git = \"https://example.com/engine\", rev = \"v1\", default-features = false, features = [\"postgres\", \"http\"] }"
    );
    assert_eq!(
        engine.package("engine-cli").toml(),
        "{ path = \"/src/engine-workspace/engine-cli\" }"
    );
}

#[test]
fn toml_strings_escape_quotes_backslashes_and_control_characters() {
    assert_eq!(toml_string("a\"b\\c\nd"), "\"a\\\"b\\\\c\\u000Ad\"");
}
