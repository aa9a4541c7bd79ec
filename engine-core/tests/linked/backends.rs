//! What the builder opens through its backends: a part the configuration asks for
//! without the backend that opens it is refused at start-up and by `check` (`engine
//! config check`), naming the crate and the `engine` feature, and the same
//! configuration starts with it.

use engine_core::config::EngineConfig;
use engine_core::{Backends, Engine, EngineError};

/// `text` (TOML) with its data directory in a directory of the test's own.
fn config(name: &str, text: &str) -> EngineConfig {
    let dir = std::env::temp_dir().join(format!("engine-backends-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    EngineConfig::parse(&format!(
        "data_dir = {:?}\n{text}",
        dir.display().to_string()
    ))
    .expect("the configuration parses")
}

/// The crate a refusal names, when `build` (or `check`) refused for a missing backend.
fn missing_backend<T>(built: Result<T, EngineError>) -> (&'static str, String) {
    match built {
        Err(error @ EngineError::MissingBackend { backend, .. }) => (backend, error.to_string()),
        Err(other) => panic!("refused, but not for a missing backend: {other}"),
        Ok(_) => panic!("the engine started without the backend its configuration needs"),
    }
}

const KNOWLEDGE: &str = "[agents.reader]\nknowledge = \"read\"\n";
const PROVIDER: &str = "[providers.p]\nwire = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\n\
     model = \"m\"\n[agents.talker.turn]\nprovider = \"p\"\n";

#[test]
fn each_configured_part_without_its_backend_is_refused_naming_the_crate_that_opens_it() {
    for (name, text, crate_name, feature) in [
        ("knowledge", KNOWLEDGE, "engine-sqlite", "sqlite"),
        ("provider", PROVIDER, "engine-providers", "http"),
        (
            "database",
            "[database]\nurl = \"postgres://engine@127.0.0.1:9/engine\"\n",
            "engine-postgres",
            "postgres",
        ),
        (
            "gateway",
            "[gateway]\nbase_url = \"http://127.0.0.1:9/v1\"\n\
             tiers.fast = { model = \"m\", usd_per_million_input = 0.2, usd_per_million_output = 0.8 }\n",
            "engine-providers",
            "http",
        ),
    ] {
        let builder = || {
            Engine::builder()
                .backends(Backends::NONE)
                .config(config(name, text))
        };
        // `check` opens nothing, and refuses what `build` would.
        for (how, (backend, message)) in [
            ("build", missing_backend(builder().build())),
            ("check", missing_backend(builder().check())),
        ] {
            assert_eq!(backend, crate_name, "{name} ({how}): {message}");
            assert!(
                message.contains(crate_name)
                    && message.contains(&format!("feature `{feature}`"))
                    && message.contains("EngineBuilder::backends"),
                "{name} ({how}): {message}"
            );
        }
    }
}

#[test]
fn the_same_configuration_starts_with_its_backends() {
    for (name, text) in [("knowledge-given", KNOWLEDGE), ("provider-given", PROVIDER)] {
        let checked = Engine::builder()
            .backends(engine::default_backends())
            .config(config(name, text))
            .check();
        assert!(
            checked.is_ok(),
            "{name}: {:?}",
            checked.err().map(|e| e.to_string())
        );
        let built = Engine::builder()
            .backends(engine::default_backends())
            .config(config(name, text))
            .build();
        assert!(
            built.is_ok(),
            "{name}: {:?}",
            built.err().map(|e| e.to_string())
        );
    }
}

#[test]
fn conversations_asked_to_be_kept_without_a_backend_are_refused_not_kept_in_memory() {
    let built = Engine::builder()
        .config(config("keep", "[agents.a]\n"))
        .keep_conversations()
        .build();
    let (backend, message) = missing_backend(built);
    assert_eq!(backend, "engine-sqlite", "{message}");
    let kept = Engine::builder()
        .backends(engine::default_backends())
        .config(config("keep-given", "[agents.a]\n"))
        .keep_conversations()
        .build();
    assert!(kept.is_ok(), "{:?}", kept.err().map(|e| e.to_string()));
}
