//! What the builder opens through its backends: a part the configuration asks for
//! without the backend that opens it is refused at start-up and by `check` (`engine
//! config check`), naming the crate and the `engine` feature, and the same
//! configuration starts with it.

use engine_core::config::EngineConfig;
use engine_core::{Backends, Engine, EngineError};

/// `text` (TOML) with its data directory in a directory of the test's own (not created).
fn config(name: &str, text: &str) -> (EngineConfig, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("engine-backends-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let config = EngineConfig::parse(&format!(
        "data_dir = {:?}\n{text}",
        dir.display().to_string()
    ))
    .expect("the configuration parses");
    (config, dir)
}

/// A refusal for a missing backend: the crate, the `engine` feature and the builder
/// method it names, and its text.
struct Missing {
    backend: &'static str,
    feature: &'static str,
    setter: &'static str,
    message: String,
}

/// The refusal, when `build` (or `check`) refused for a missing backend.
fn missing_backend<T>(built: Result<T, EngineError>) -> Missing {
    match built {
        Err(
            error @ EngineError::MissingBackend {
                backend,
                feature,
                setter,
                ..
            },
        ) => Missing {
            backend,
            feature,
            setter,
            message: error.to_string(),
        },
        Err(other) => panic!("refused, but not for a missing backend: {other}"),
        Ok(_) => panic!("the engine started without the backend its configuration needs"),
    }
}

const KNOWLEDGE: &str = "[agents.reader]\nknowledge = \"read\"\n";
const PROVIDER: &str = "[providers.p]\nwire = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\n\
     model = \"m\"\n[agents.talker.turn]\nprovider = \"p\"\n";
const DATABASE: &str = "[database]\nurl = \"postgres://engine@127.0.0.1:9/engine\"\n";
const GATEWAY: &str = "[gateway]\nbase_url = \"http://127.0.0.1:9/v1\"\n\
     tiers.fast = { model = \"m\", usd_per_million_input = 0.2, usd_per_million_output = 0.8 }\n";

#[test]
fn each_configured_part_without_its_backend_is_refused_naming_the_crate_that_opens_it() {
    for (name, text, crate_name, feature, setter) in [
        (
            "knowledge",
            KNOWLEDGE,
            "engine-sqlite",
            "sqlite",
            "knowledge_store",
        ),
        ("provider", PROVIDER, "engine-providers", "http", "provider"),
        (
            "database",
            DATABASE,
            "engine-postgres",
            "postgres",
            "backends",
        ),
        (
            "gateway",
            GATEWAY,
            "engine-providers",
            "http",
            "model_gateway",
        ),
    ] {
        let builder = || {
            Engine::builder()
                .backends(Backends::NONE)
                .config(config(name, text).0)
        };
        // `check` opens nothing, and refuses what `build` would.
        for (how, missing) in [
            ("build", missing_backend(builder().build())),
            ("check", missing_backend(builder().check())),
        ] {
            let message = &missing.message;
            assert_eq!(missing.backend, crate_name, "{name} ({how}): {message}");
            assert_eq!(missing.feature, feature, "{name} ({how}): {message}");
            assert_eq!(missing.setter, setter, "{name} ({how}): {message}");
            assert!(
                message.contains(&format!("feature `{feature}`")),
                "{name} ({how}) says how to fix it: {message}"
            );
        }
    }
}

#[test]
fn the_same_configuration_starts_with_its_backends() {
    for (name, text) in [
        ("knowledge-given", KNOWLEDGE),
        ("provider-given", PROVIDER),
        ("gateway-given", GATEWAY),
        // Checked only: starting connects to the database.
        ("database-given", DATABASE),
    ] {
        let (config, data_dir) = config(name, text);
        let checked = Engine::builder()
            .backends(engine::default_backends())
            .config(config.clone())
            .check();
        assert!(
            checked.is_ok(),
            "{name}: {:?}",
            checked.err().map(|e| e.to_string())
        );
        assert!(!data_dir.exists(), "{name}: `check` created {data_dir:?}");
        if name == "database-given" {
            continue;
        }
        let built = Engine::builder()
            .backends(engine::default_backends())
            .config(config)
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
        .config(config("keep", "[agents.a]\n").0)
        .keep_conversations()
        .build();
    let missing = missing_backend(built);
    assert_eq!(missing.backend, "engine-sqlite", "{}", missing.message);
    assert_eq!(missing.setter, "conversations", "{}", missing.message);
    let kept = Engine::builder()
        .backends(engine::default_backends())
        .config(config("keep-given", "[agents.a]\n").0)
        .keep_conversations()
        .build();
    assert!(kept.is_ok(), "{:?}", kept.err().map(|e| e.to_string()));
}
