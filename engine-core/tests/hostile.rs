//! Generated hostile input (proptest): whatever arrives as a call's arguments, as text to
//! redact, or at a store, the engine answers with a clear error or a result, never a panic
//! that escapes; no secret survives redaction, and no store limit gives way.
//!
//! This test binary links only the tool defined here.

use std::time::Duration;

use engine_core::config::{ArtifactLimits, EngineConfig, KnowledgeLimits};
use engine_core::stores::{MemoryArtifacts, MAX_ANSWERED_DOCUMENTS};
use engine_core::{Call, CallErrorKind, Engine, Limits, Turn};
use engine_sqlite::SqliteKnowledge;
use plugin_sdk::artifacts::{Artifact, ArtifactError};
use plugin_sdk::engine::{KnowledgeStore, Redact, RedactValues, Scope};
use plugin_sdk::knowledge::{KnowledgeLevel, SearchError};
use plugin_sdk::prelude::*;
use proptest::prelude::*;
use serde_json::{json, Value};

plugin_sdk::plugin! {
    namespace = "hostile",
    engine = ">=0.1",
}

#[derive(Deserialize, JsonSchema, ToolArgs)]
struct Line {
    sku: String,
    quantity: u32,
}

#[derive(Deserialize, JsonSchema, ToolArgs)]
struct Basket {
    owner: String,
    lines: Vec<Line>,
    note: Option<String>,
}

#[derive(Serialize, JsonSchema)]
struct Total {
    items: u64,
}

/// Counts the items in a basket (every field read: a hostile value reaches them all).
#[define_tool]
async fn count(basket: Basket) -> Total {
    let named = basket.owner.len() + basket.note.map_or(0, |note| note.len());
    let skus: usize = basket.lines.iter().map(|line| line.sku.len()).sum();
    std::hint::black_box(named + skus);
    Total {
        items: basket
            .lines
            .iter()
            .map(|line| u64::from(line.quantity))
            .sum(),
    }
}

const MAX_ARGUMENT_BYTES: usize = 64 * 1024;

fn engine() -> (Engine, Turn) {
    let engine = Engine::builder()
        .config(EngineConfig::parse("[agents.shop]\n").unwrap())
        .limits(Limits {
            max_argument_bytes: MAX_ARGUMENT_BYTES,
            ..Limits::default()
        })
        .build()
        .expect("the hostile tool is valid");
    let turn = engine.turn("shop").unwrap();
    (engine, turn)
}

/// Any JSON value, nested up to `depth` levels.
fn any_json(depth: u32) -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("JSON numbers are finite", |n| n.is_finite())
            .prop_map(Value::from),
        ".{0,40}".prop_map(Value::from),
    ];
    leaf.prop_recursive(depth, 256, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::from),
            prop::collection::btree_map("[a-z_]{1,8}|sku|quantity|owner|lines|note", inner, 0..8)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

/// A well-formed basket, so that hostile variations start from something close.
fn basket() -> impl Strategy<Value = Value> {
    (
        ".{0,20}",
        prop::collection::vec((".{0,12}", any::<u32>()), 0..6),
        prop::option::of(".{0,20}"),
    )
        .prop_map(|(owner, lines, note)| {
            let lines: Vec<Value> = lines
                .into_iter()
                .map(|(sku, quantity)| json!({ "sku": sku, "quantity": quantity }))
                .collect();
            json!({ "owner": owner, "lines": lines, "note": note })
        })
}

/// Text nested `depth` times in arrays, or in objects.
fn deeply_nested(depth: usize, objects: bool) -> String {
    if objects {
        format!("{}1{}", r#"{"a":"#.repeat(depth), "}".repeat(depth))
    } else {
        format!("{}1{}", "[".repeat(depth), "]".repeat(depth))
    }
}

/// Calls the tool with `arguments`, and checks what every answer must be: the call
/// returns (a panic would fail the test here), and an error is one the model can read,
/// short whatever the input's size.
fn call(engine: &(Engine, Turn), arguments: &str) -> Result<Value, CallErrorKind> {
    let (engine, turn) = engine;
    let outcome =
        futures::executor::block_on(engine.call(turn, Call::new("hostile__count", arguments)));
    match outcome {
        Ok(output) => Ok(serde_json::from_str(&output).expect("a result is JSON")),
        Err(error) => {
            let rendered: Value = serde_json::from_str(&error.to_json()).expect("errors are JSON");
            assert_eq!(rendered["error"]["kind"], error.kind().as_str());
            assert!(
                error.message().len() <= 2 * 1024,
                "an error message of {} bytes for {} bytes of arguments",
                error.message().len(),
                arguments.len()
            );
            Err(error.kind())
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn any_json_value_is_answered_or_refused_as_invalid_arguments(value in any_json(6)) {
        let engine = engine();
        let text = value.to_string();
        match call(&engine, &text) {
            Ok(total) => prop_assert!(total["items"].is_u64()),
            Err(kind) => prop_assert_eq!(kind, CallErrorKind::InvalidArguments, "{}", text),
        }
    }

    #[test]
    fn any_text_is_answered_or_refused_as_invalid_arguments(text in "\\PC{0,200}") {
        let engine = engine();
        if let Err(kind) = call(&engine, &text) {
            prop_assert_eq!(kind, CallErrorKind::InvalidArguments, "{:?}", text);
        }
    }

    #[test]
    fn a_well_formed_basket_is_counted(value in basket()) {
        let expected: u64 = value["lines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|line| line["quantity"].as_u64().unwrap())
            .sum();
        let total = call(&engine(), &value.to_string()).expect("a well-formed basket");
        prop_assert_eq!(total["items"].as_u64(), Some(expected));
    }

    #[test]
    fn a_basket_with_a_key_the_schema_lacks_at_any_depth_is_refused(
        value in basket(),
        key in "[a-z]{1,10}",
        at_line in any::<bool>(),
    ) {
        prop_assume!(!["sku", "quantity", "owner", "lines", "note"].contains(&key.as_str()));
        let mut value = value;
        let object = if at_line && !value["lines"].as_array().unwrap().is_empty() {
            value["lines"][0].as_object_mut().unwrap()
        } else {
            value.as_object_mut().unwrap()
        };
        object.insert(key, json!(1));
        prop_assert_eq!(call(&engine(), &value.to_string()), Err(CallErrorKind::InvalidArguments));
    }

}

proptest! {
    // Inputs of up to 256 KiB: fewer cases, the same reach.
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn nesting_of_any_depth_is_refused_not_overflowed(depth in 1usize..20_000, objects in any::<bool>()) {
        let text = deeply_nested(depth, objects);
        prop_assert_eq!(
            call(&engine(), &text).map(drop),
            Err(CallErrorKind::InvalidArguments)
        );
    }

    #[test]
    fn huge_strings_are_refused_past_the_limit_and_answered_within_it(size in 0usize..(4 * MAX_ARGUMENT_BYTES)) {
        let owner = "x".repeat(size);
        let text = json!({ "owner": owner, "lines": [], "note": null }).to_string();
        let outcome = call(&engine(), &text);
        if text.len() > MAX_ARGUMENT_BYTES {
            prop_assert_eq!(outcome.map(drop), Err(CallErrorKind::InvalidArguments));
        } else {
            prop_assert_eq!(outcome.map(|total| total["items"].clone()), Ok(json!(0)));
        }
    }
}

/// `value` as it appears inside a JSON string, and inside a Rust `{:?}` of a string.
fn escaped_forms(value: &str) -> [String; 2] {
    let json = serde_json::to_string(value).unwrap();
    let debug = format!("{value:?}");
    [
        json[1..json.len() - 1].to_owned(),
        debug[1..debug.len() - 1].to_owned(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn a_secret_never_survives_redaction_raw_or_escaped(
        secret in "\\PC{1,24}|[\"\\\\\\x00-\\x1f\\x7f a-zé€\u{200b}]{1,24}",
        before in "\\PC{0,20}",
        after in "\\PC{0,20}",
    ) {
        let redact = RedactValues::new([secret.clone()]);
        let [json, debug] = escaped_forms(&secret);
        for form in [secret.clone(), json, debug] {
            let text = format!("{before}{form}{after}");
            let clean = redact.redact(&text);
            // The marker is not a leak of a secret it holds, nor of one that straddles
            // its edge and the text beside it (`]'` in `[REDACTED]'`): it is read as a
            // private-use character, which no generated secret holds.
            let outside_markers = clean.replace("[REDACTED]", "\u{E000}");
            prop_assert!(
                !outside_markers.contains(form.as_str()),
                "{form:?} survived in {clean:?}"
            );
        }
    }
}

/// One artifact a hostile tool might put: any conversation, any name and type (long ones
/// included), any size, any time to live.
fn any_put() -> impl Strategy<Value = (String, Artifact, Option<Duration>)> {
    (
        "\\PC{0,8}",
        prop::collection::vec(any::<u8>(), 0..6_000),
        "\\PC{0,400}",
        "\\PC{0,80}",
        prop::option::of(any::<u64>().prop_map(Duration::from_secs)),
    )
        .prop_map(|(conversation, bytes, filename, mime, ttl)| {
            (
                conversation,
                Artifact {
                    bytes,
                    filename,
                    mime,
                },
                ttl,
            )
        })
}

/// A knowledge base with a few documents of one agent, and another agent's.
fn knowledge() -> (SqliteKnowledge, Scope) {
    let dir = std::env::temp_dir().join(format!(
        "hostile-knowledge-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let store = SqliteKnowledge::open(&dir.join("knowledge.sqlite"), KnowledgeLimits::default())
        .expect("a fresh store opens");
    let scope = |agent: &str| Scope::plugin(agent, "hostile", KnowledgeLevel::Write);
    let runtime = runtime();
    for (agent, text) in [
        ("shop", "tea and coffee"),
        ("shop", "green tea"),
        ("other", "tea"),
    ] {
        runtime
            .block_on(store.write(&scope(agent), &format!("{text}.md"), text))
            .expect("a fixture document is written");
    }
    (store, scope("shop"))
}

/// Whether a store may refuse `query`: more distinct words (case folded) than the
/// default 32, or a word of more than 64 characters.
fn past_the_bounds(query: &str) -> bool {
    let words: std::collections::HashSet<String> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect();
    words.len() > 32 || words.iter().any(|word| word.chars().count() > 64)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn artifacts_never_hold_more_than_their_capacity_whatever_is_put(
        puts in prop::collection::vec(any_put(), 1..40),
    ) {
        let limits = ArtifactLimits {
            max_bytes: 4_096,
            max_name_bytes: 255,
            capacity_bytes: 32 * 1024,
            ttl_secs: 60,
        };
        let store = MemoryArtifacts::new(limits);
        for (conversation, artifact, ttl) in puts {
            let name_bytes = artifact.filename.len().max(artifact.mime.len());
            let size = artifact.bytes.len();
            let payload = size + artifact.filename.len() + artifact.mime.len() + conversation.len();
            let held = store.held_bytes();
            match store.put(&conversation, artifact, ttl) {
                Ok(_) => {
                    prop_assert!(size <= limits.max_bytes && name_bytes <= limits.max_name_bytes);
                }
                Err(ArtifactError::TooLarge { .. }) => prop_assert!(size > limits.max_bytes),
                Err(ArtifactError::NameTooLong { .. }) => {
                    prop_assert!(name_bytes > limits.max_name_bytes)
                }
                // Full only when it is: what it holds, this artifact, and at most 1 KiB of
                // bookkeeping (its handle and entry) pass the capacity.
                Err(ArtifactError::StoreFull) => prop_assert!(
                    held + payload + 1024 > limits.capacity_bytes,
                    "refused as full holding {} bytes, for {} bytes",
                    held,
                    payload
                ),
                Err(ArtifactError::Unavailable(why)) => {
                    prop_assert!(false, "memory is never unavailable: {why}")
                }
            }
            prop_assert!(
                store.held_bytes() <= limits.capacity_bytes,
                "{} bytes held",
                store.held_bytes()
            );
        }
    }

    #[test]
    fn a_knowledge_search_of_any_text_answers_the_agents_documents_or_refuses_clearly(
        query in "\\PC{0,300}|([a-z]{1,8} ){0,60}",
        limit in prop_oneof![0usize..5, Just(usize::MAX)],
    ) {
        let (store, scope) = knowledge();
        match runtime().block_on(store.search(&scope, &query, limit)) {
            Ok(hits) => {
                prop_assert!(hits.len() <= limit.min(MAX_ANSWERED_DOCUMENTS));
                // Only the agent's own documents: the other agent's "tea.md" never.
                prop_assert!(hits.iter().all(|hit| hit.filename != "tea.md"), "{hits:?}");
            }
            Err(SearchError::Store(error)) => prop_assert!(false, "the store failed: {error}"),
            Err(refused) => prop_assert!(!refused.to_string().is_empty()),
        }
    }

    /// Hostile text around a word both agents' documents hold: an answer that is no
    /// refusal finds the agent's documents with that word (a store that answers nothing
    /// fails here), and never the other agent's.
    #[test]
    fn a_knowledge_search_for_a_word_both_agents_hold_finds_only_the_agents_own_documents(
        before in "\\PC{0,40}|([a-z]{1,8} ){0,10}",
        word in prop::sample::select(vec!["tea", "TEA", "Tea", "tea,", "(tea)"]),
        after in "\\PC{0,40}",
        limit in prop_oneof![1usize..5, Just(usize::MAX)],
    ) {
        let (store, scope) = knowledge();
        let query = format!("{before} {word} {after}");
        match runtime().block_on(store.search(&scope, &query, limit)) {
            Ok(hits) => {
                let mut found: Vec<&str> = hits.iter().map(|hit| hit.filename.as_str()).collect();
                found.sort_unstable();
                // Both of the shop's documents hold "tea": as many as the limit allows.
                let expected = ["green tea.md", "tea and coffee.md"];
                prop_assert_eq!(found.len(), limit.min(2), "{:?} found {:?}", query, found);
                prop_assert!(found.iter().all(|name| expected.contains(name)), "{:?}", found);
            }
            Err(SearchError::Store(error)) => prop_assert!(false, "the store failed: {error}"),
            // Refused only past the bounds every store keeps (KnowledgeLimits' default
            // words, and `MAX_WORD_CHARS`): a store refusing all passes no query here.
            Err(refused) => prop_assert!(past_the_bounds(&query), "{query:?}: {refused}"),
        }
    }
}
