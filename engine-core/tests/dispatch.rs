//! Dispatch: every way a call can go wrong comes back as an error the model reads, and
//! the engine keeps serving afterwards.
//!
//! This test binary links only the tools defined here.

use std::time::Duration;

use engine_core::config::EngineConfig;
use engine_core::{Call, CallErrorKind, CancellationToken, Engine, Limits, Tool, Turn};
use plugin_sdk::engine::{CallInput, ToolEntry};
use plugin_sdk::prelude::*;
use serde_json::{json, Value};

plugin_sdk::plugin! {
    namespace = "probe",
    engine = ">=0.1",
}

#[derive(Deserialize, JsonSchema, ToolArgs)]
struct Address {
    city: String,
    zip: u32,
}

#[derive(Deserialize, JsonSchema, ToolArgs)]
struct Parcel {
    weight_grams: u32,
    to: Address,
    tags: Vec<String>,
}

/// What to look for, and how many.
#[derive(Deserialize, JsonSchema, ToolArgs)]
struct Search {
    query: String,
    /// Null for no limit.
    limit: Option<u32>,
    within: Option<Address>,
}

#[derive(Serialize, JsonSchema)]
struct Receipt {
    city: String,
    zip: u32,
    grams: u32,
    tags: usize,
}

/// Ship a parcel.
#[define_tool]
async fn ship(parcel: Parcel) -> Receipt {
    Receipt {
        city: parcel.to.city,
        zip: parcel.to.zip,
        grams: parcel.weight_grams,
        tags: parcel.tags.len(),
    }
}

/// Always fails.
#[define_tool]
async fn refuse(_parcel: Parcel) -> Result<Receipt, ToolError> {
    Err(ToolError::new("the depot is closed on Sundays"))
}

/// Panics while running.
#[define_tool]
async fn explode(_parcel: Parcel) -> Receipt {
    panic!("secret token sk-123 leaked in a panic")
}

/// Waits for ever.
#[define_tool]
async fn hang(_parcel: Parcel) -> Receipt {
    std::future::pending().await
}

/// Searches nothing, and says what it was asked.
#[define_tool]
async fn search(search: Search) -> String {
    let within = search.within.map(|address| address.city);
    format!("{} {:?} {within:?}", search.query, search.limit)
}

/// Waits a little, then answers.
#[define_tool]
async fn nap(parcel: Parcel) -> Receipt {
    tokio::time::sleep(Duration::from_millis(50)).await;
    ship(parcel).await
}

const PARCEL: &str =
    r#"{"weight_grams": 900, "to": {"city": "Rome", "zip": 118}, "tags": ["fragile"]}"#;

/// An engine over the probe tools, under `limits`, and a turn of its one agent.
fn engine_with(limits: Limits) -> (Engine, Turn) {
    let config = EngineConfig::parse("[agents.probe]\n").unwrap();
    let engine = Engine::builder()
        .config(config)
        .limits(limits)
        .build()
        .expect("the probe tools are valid");
    let turn = engine.turn("probe").unwrap();
    (engine, turn)
}

fn engine() -> (Engine, Turn) {
    engine_with(Limits::default())
}

/// The probe tool called `name` on the wire.
fn tool<'e>(engine: &'e Engine, name: &str) -> &'e Tool {
    engine
        .tools()
        .iter()
        .find(|tool| tool.wire_name() == name)
        .unwrap_or_else(|| panic!("no tool `{name}`"))
}

async fn call(
    (engine, turn): &(Engine, Turn),
    tool: &str,
    arguments: &str,
) -> Result<Value, engine_core::CallError> {
    let output = engine.call(turn, Call::new(tool, arguments)).await?;
    Ok(serde_json::from_str(&output).expect("tools return JSON"))
}

fn expect_error(result: Result<Value, engine_core::CallError>, kind: CallErrorKind) -> String {
    let error = result.expect_err("the call must fail");
    assert_eq!(error.kind(), kind, "{error}");
    let rendered: Value = serde_json::from_str(&error.to_json()).unwrap();
    assert_eq!(rendered["error"]["kind"], kind.as_str());
    assert_eq!(rendered["error"]["message"], error.message());
    error.message().to_owned()
}

#[tokio::test]
async fn a_call_by_id_or_wire_name_returns_the_tools_json() {
    let engine = engine();
    let expected = json!({"city": "Rome", "zip": 118, "grams": 900, "tags": 1});
    assert_eq!(call(&engine, "probe:ship", PARCEL).await.unwrap(), expected);
    assert_eq!(
        call(&engine, "probe__ship", PARCEL).await.unwrap(),
        expected
    );
}

#[tokio::test]
async fn bad_json_is_reported_as_such() {
    let message = expect_error(
        call(&engine(), "probe__ship", r#"{"weight_grams": 9"#).await,
        CallErrorKind::InvalidArguments,
    );
    assert!(
        message.starts_with("the arguments are not valid JSON"),
        "{message}"
    );
}

#[tokio::test]
async fn a_wrong_type_names_the_field_and_the_expected_type() {
    let arguments = r#"{"weight_grams": 900, "to": {"city": "Rome", "zip": "00118"}, "tags": []}"#;
    let message = expect_error(
        call(&engine(), "probe__ship", arguments).await,
        CallErrorKind::InvalidArguments,
    );
    assert_eq!(
        message,
        r#"invalid arguments: `to.zip`: invalid type: string "00118", expected u32"#
    );
}

#[tokio::test]
async fn a_wrong_type_names_the_authors_type() {
    let arguments = r#"{"weight_grams": 900, "to": "Rome", "tags": []}"#;
    let message = expect_error(
        call(&engine(), "probe__ship", arguments).await,
        CallErrorKind::InvalidArguments,
    );
    assert_eq!(
        message,
        r#"invalid arguments: `to`: invalid type: string "Rome", expected struct Address"#
    );
}

#[tokio::test]
async fn a_missing_key_is_named_by_its_path() {
    let arguments = r#"{"weight_grams": 900, "to": {"city": "Rome"}, "tags": []}"#;
    let message = expect_error(
        call(&engine(), "probe__ship", arguments).await,
        CallErrorKind::InvalidArguments,
    );
    assert_eq!(
        message,
        format!("invalid arguments: missing key `to.zip`: {EVERY_KEY}")
    );
    let message = expect_error(
        call(&engine(), "probe__ship", "{}").await,
        CallErrorKind::InvalidArguments,
    );
    assert_eq!(
        message,
        format!("invalid arguments: missing key `weight_grams`: {EVERY_KEY}")
    );
}

/// What a missing key's message says after its path.
const EVERY_KEY: &str =
    "the schema requires every key it lists; send null to leave out one that may be null";

#[tokio::test]
async fn a_key_the_schema_does_not_have_is_refused_at_any_depth_naming_its_path() {
    let engine = engine();
    let nested =
        r#"{"weight_grams": 900, "to": {"city": "Rome", "zip": 118, "colour": "red"}, "tags": []}"#;
    let message = expect_error(
        call(&engine, "probe__ship", nested).await,
        CallErrorKind::InvalidArguments,
    );
    assert_eq!(
        message,
        "invalid arguments: unknown key `to.colour` (expected `city` or `zip`); the schema allows no other keys"
    );
    // A misspelt key at the top, even beside every key the schema asks for.
    let misspelt = r#"{"weight_grams": 900, "weight_gram": 1, "to": {"city": "Rome", "zip": 118}, "tags": []}"#;
    let message = expect_error(
        call(&engine, "probe__ship", misspelt).await,
        CallErrorKind::InvalidArguments,
    );
    assert_eq!(
        message,
        "invalid arguments: unknown key `weight_gram` (expected one of `weight_grams`, `to`, `tags`); the schema allows no other keys"
    );
    // Inside an `Option`, the nested object is held to its schema too.
    let in_option =
        r#"{"query": "q", "limit": null, "within": {"city": "Rome", "zip": 1, "zap": 2}}"#;
    let message = expect_error(
        call(&engine, "probe__search", in_option).await,
        CallErrorKind::InvalidArguments,
    );
    assert!(
        message.starts_with("invalid arguments: unknown key `within.zap`"),
        "{message}"
    );
}

#[tokio::test]
async fn an_option_left_out_is_refused_and_null_is_how_to_leave_it_out() {
    let engine = engine();
    let message = expect_error(
        call(
            &engine,
            "probe__search",
            r#"{"query": "q", "within": null}"#,
        )
        .await,
        CallErrorKind::InvalidArguments,
    );
    assert_eq!(
        message,
        format!("invalid arguments: missing key `limit`: {EVERY_KEY}")
    );
    let message = expect_error(
        call(
            &engine,
            "probe__search",
            r#"{"query": "q", "limit": 3, "within": {"city": "Rome"}}"#,
        )
        .await,
        CallErrorKind::InvalidArguments,
    );
    assert_eq!(
        message,
        format!("invalid arguments: missing key `within.zip`: {EVERY_KEY}")
    );
    // As the schema says: every key present, null for none.
    let sent = r#"{"query": "q", "limit": null, "within": null}"#;
    assert_eq!(
        call(&engine, "probe__search", sent).await.unwrap(),
        json!("q None None")
    );
    let sent = r#"{"query": "q", "limit": 3, "within": {"city": "Rome", "zip": 1}}"#;
    assert_eq!(
        call(&engine, "probe__search", sent).await.unwrap(),
        json!("q Some(3) Some(\"Rome\")")
    );
}

#[tokio::test]
async fn the_schema_the_model_sees_requires_what_dispatch_requires() {
    let engine = engine();
    let schema = tool(&engine.0, "probe__search").input_schema();
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(schema["required"], json!(["query", "limit", "within"]));
    let within = &schema["properties"]["within"];
    assert_eq!(within["additionalProperties"], false, "{within}");
    assert_eq!(within["required"], json!(["city", "zip"]), "{within}");
}

#[tokio::test]
async fn an_element_of_a_list_is_named_by_index() {
    let arguments = r#"{"weight_grams": 900, "to": {"city": "Rome", "zip": 1}, "tags": ["a", 7]}"#;
    let message = expect_error(
        call(&engine(), "probe__ship", arguments).await,
        CallErrorKind::InvalidArguments,
    );
    assert_eq!(
        message,
        "invalid arguments: `tags[1]`: invalid type: integer `7`, expected a string"
    );
}

#[tokio::test]
async fn deeply_nested_and_oversized_arguments_are_refused() {
    let engine = engine();
    let deep = format!(
        r#"{{"weight_grams": 1, "extra": {}{}}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let message = expect_error(
        call(&engine, "probe__ship", &deep).await,
        CallErrorKind::InvalidArguments,
    );
    // An unknown key is refused where it is read, before its 100,000 levels.
    assert!(
        message.starts_with("invalid arguments: unknown key `extra`"),
        "{message}"
    );

    let huge = format!(r#"{{"tags": ["{}"]}}"#, "x".repeat(2 << 20));
    let message = expect_error(
        call(&engine, "probe__ship", &huge).await,
        CallErrorKind::InvalidArguments,
    );
    assert!(message.contains("more than the 1048576 bytes"), "{message}");
}

#[tokio::test]
async fn an_unknown_tool_is_refused_without_listing_any_tool() {
    let engine = engine();
    let message = expect_error(
        call(&engine, "probe:missing", "{}").await,
        CallErrorKind::UnknownTool,
    );
    assert!(message.contains("`probe:missing`"), "{message}");
    for name in ["ship", "explode", "hang"] {
        assert!(!message.contains(name), "the error lists a tool: {message}");
    }
    let long = "x".repeat(10_000);
    let message = expect_error(call(&engine, &long, "{}").await, CallErrorKind::UnknownTool);
    assert!(
        message.len() < 200,
        "the name is echoed in full: {} bytes",
        message.len()
    );
}

#[tokio::test]
async fn a_tools_own_error_reaches_the_model() {
    let message = expect_error(
        call(&engine(), "probe__refuse", PARCEL).await,
        CallErrorKind::Failed,
    );
    assert_eq!(message, "the depot is closed on Sundays");
}

#[tokio::test]
async fn a_panic_is_caught_reported_without_its_payload_and_the_engine_serves_on() {
    let engine = engine();
    let message = expect_error(
        call(&engine, "probe__explode", PARCEL).await,
        CallErrorKind::Panicked,
    );
    assert!(
        !message.contains("sk-123"),
        "the panic payload reached the model: {message}"
    );
    assert!(message.contains("probe__explode"), "{message}");
    assert!(call(&engine, "probe__ship", PARCEL).await.is_ok());
}

#[tokio::test(start_paused = true)]
async fn a_tool_past_its_deadline_is_stopped() {
    let (engine, turn) = engine();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    let error = engine
        .call(&turn, Call::new("probe__hang", PARCEL).deadline(deadline))
        .await
        .expect_err("a hanging tool must time out");
    assert_eq!(error.kind(), CallErrorKind::TimedOut);
    assert!(tokio::time::Instant::now() >= deadline);
    // A tool that waits less than its deadline is not cut short.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    let fine = engine
        .call(&turn, Call::new("probe__nap", PARCEL).deadline(deadline))
        .await;
    assert!(fine.is_ok(), "{fine:?}");
}

#[tokio::test(start_paused = true)]
async fn without_a_deadline_the_default_timeout_applies() {
    let engine = engine_with(Limits {
        default_timeout: Duration::from_secs(2),
        ..Default::default()
    });
    let started = tokio::time::Instant::now();
    let result = call(&engine, "probe__hang", PARCEL).await;
    expect_error(result, CallErrorKind::TimedOut);
    assert_eq!(started.elapsed(), Duration::from_secs(2));
}

// The paused clock moves only when every task waits: the call ends at the 20 ms the
// token fires, not at the 30 s default deadline (which would also end it).
#[tokio::test(start_paused = true)]
async fn a_cancelled_call_stops_at_once() {
    let (engine, turn) = engine();
    let started = tokio::time::Instant::now();
    let token = CancellationToken::new();
    let canceller = {
        let token = token.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            token.cancel();
        })
    };
    let error = engine
        .call(&turn, Call::new("probe__hang", PARCEL).cancel_on(&token))
        .await
        .expect_err("a cancelled call must end");
    assert_eq!(error.kind(), CallErrorKind::Cancelled);
    assert_eq!(started.elapsed(), Duration::from_millis(20));
    canceller.await.unwrap();
}

#[tokio::test]
async fn a_body_without_await_gets_a_ready_entry_and_one_that_awaits_an_async_one() {
    let engine = engine();
    let entry = |name: &str| tool(&engine.0, name).descriptor().entry;
    for name in ["probe__ship", "probe__refuse", "probe__explode"] {
        assert!(
            matches!(entry(name), ToolEntry::Ready(_)),
            "{name} has no `.await`"
        );
    }
    for name in ["probe__hang", "probe__nap"] {
        assert!(matches!(entry(name), ToolEntry::Async(_)), "{name} awaits");
    }
    // Both kinds answer alike through the descriptor's uniform future.
    let context = ToolContext::new();
    let ship = tool(&engine.0, "probe__ship").descriptor();
    let via_future = ship.call(CallInput::new(PARCEL, &context)).await.unwrap();
    assert_eq!(
        via_future,
        call(&engine, "probe__ship", PARCEL)
            .await
            .unwrap()
            .to_string()
    );
}

#[tokio::test]
async fn a_call_already_cancelled_or_late_runs_nothing() {
    let (engine, turn) = engine();
    let token = CancellationToken::new();
    token.cancel();
    let error = engine
        .call(&turn, Call::new("probe__explode", PARCEL).cancel_on(&token))
        .await
        .expect_err("a cancelled turn runs no tool");
    // `explode` panics when it runs: a `Cancelled` error means it never ran.
    assert_eq!(error.kind(), CallErrorKind::Cancelled);
    let past = tokio::time::Instant::now() - Duration::from_millis(1);
    let error = engine
        .call(&turn, Call::new("probe__explode", PARCEL).deadline(past))
        .await
        .expect_err("a late call runs no tool");
    assert_eq!(error.kind(), CallErrorKind::TimedOut);
}
