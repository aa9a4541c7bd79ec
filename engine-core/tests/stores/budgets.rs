//! Budgets across replicas: an agent's spend window counted by every replica together
//! in the shared database, so two replicas never pass it, and what it holds is what the
//! calls cost; and the same for engines given one ledger in memory.

use std::sync::Arc;

use engine_core::config::{DatabaseConfig, EngineConfig};
use engine_core::model::{
    GatewayError, GatewayReply, MemorySpendLedger, ModelGateway, SharedWindow, SpendLedger,
    WindowReservation,
};
use engine_core::{Call, Engine};
use plugin_sdk::engine::{BoxFuture, ToolDescriptor};
use plugin_sdk::model::ChatRequest;
use plugin_sdk::prelude::*;

use crate::support::{fresh_database, session};

#[derive(Deserialize, JsonSchema, ToolArgs)]
struct Question {
    /// What to ask.
    text: String,
}

/// Asks the fast model.
#[define_tool]
async fn ask(args: Question, model: Option<Model>) -> Result<String, ToolError> {
    let model = model.ok_or_else(|| ToolError::new("no model access"))?;
    let request = ChatRequest {
        tier: Tier::Fast,
        system: None,
        messages: vec![ChatMessage::user(args.text)],
        max_output_tokens: None,
    };
    Ok(model.chat(request).await?.text)
}

/// What every call costs.
const COST: f64 = 0.001;
/// What a call may cost at most, reserved while it runs: more than it costs, so that
/// the ledger shows whether each call was settled to its cost.
const WORST_CASE: f64 = 0.0011;

/// A gateway that answers at once, for [`COST`].
struct Fixed;

impl ModelGateway for Fixed {
    fn chat<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<GatewayReply, GatewayError>> {
        Box::pin(async move {
            Ok(GatewayReply {
                text: format!("answer to {}", request.messages[0].content),
                model: "fixed".into(),
                cost_usd: COST,
            })
        })
    }

    fn worst_case_usd(&self, _: &ChatRequest) -> Result<f64, GatewayError> {
        Ok(WORST_CASE)
    }
}

/// A replica whose agent `thinker` may spend $0.0035 an hour: three calls (the third
/// reserves its worst case over two settled ones: $0.0031; a fourth would need $0.0041).
fn replica(database: &DatabaseConfig) -> Engine {
    replica_with(database, None)
}

/// [`replica`], counting its windows in `ledger` if one is given.
fn replica_with(database: &DatabaseConfig, ledger: Option<&Arc<dyn SpendLedger>>) -> Engine {
    let config = format!(
        "[database]\nurl = {:?}\npassword_env = {:?}\n\
         [agents.thinker]\nmodel = {{ spend_cap_usd = 1.0, window = {{ cap_usd = 0.0035, secs = 3600 }} }}\n",
        database.url, database.password_env
    );
    let builder = Engine::builder()
        .backends(engine::default_backends())
        .config(EngineConfig::parse(&config).unwrap())
        .tools(probe_tools())
        .model_gateway(Arc::new(Fixed));
    match ledger {
        Some(ledger) => builder.spend_ledger(Arc::clone(ledger)),
        None => builder,
    }
    .build()
    .expect("the replica starts")
}

/// An engine of one process whose agent `thinker` has the same window, counted in
/// `ledger`.
fn sharing(ledger: &Arc<dyn SpendLedger>) -> Engine {
    let config = "[agents.thinker]\nmodel = { spend_cap_usd = 1.0, window = { cap_usd = 0.0035, secs = 3600 } }\n";
    Engine::builder()
        .config(EngineConfig::parse(config).unwrap())
        .tools(probe_tools())
        .model_gateway(Arc::new(Fixed))
        .spend_ledger(Arc::clone(ledger))
        .build()
        .expect("the engine starts")
}

fn probe_tools() -> impl Iterator<Item = &'static ToolDescriptor> {
    plugin_sdk::engine::linked_tools().filter(|tool| (tool.plugin)().namespace == "probe")
}

async fn ask_on(engine: &Engine) -> Result<String, String> {
    let turn = engine.turn("thinker").unwrap();
    engine
        .call(&turn, Call::new("probe__ask", r#"{"text":"q"}"#))
        .await
        .map_err(|error| error.message().to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_count_an_agents_window_together_and_charge_what_calls_cost() {
    let database = fresh_database().await;
    let (a, b) = (replica(&database), replica(&database));
    // Each replica alone would allow three calls; together they allow three.
    assert!(ask_on(&a).await.is_ok());
    assert!(ask_on(&b).await.is_ok());
    assert!(ask_on(&a).await.is_ok());
    for engine in [&b, &a] {
        let refused = ask_on(engine)
            .await
            .expect_err("the shared window is spent");
        assert!(
            refused.contains("the agent's 3600-second model spend cap"),
            "{refused}"
        );
    }
    holds_three_settled_calls(&database).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_on_two_replicas_never_pass_the_window() {
    let database = fresh_database().await;
    let (a, b) = (replica(&database), replica(&database));
    let calls = (0..10).map(|n| ask_on(if n % 2 == 0 { &a } else { &b }));
    let results = futures::future::join_all(calls).await;
    let answered = results.iter().filter(|result| result.is_ok()).count();
    assert_eq!(answered, 3, "{results:?}");
    for refused in results.iter().filter_map(|result| result.as_ref().err()) {
        assert!(
            refused.contains("the agent's 3600-second model spend cap"),
            "refused for the window, not for another reason: {refused}"
        );
    }
    holds_three_settled_calls(&database).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn engines_given_one_ledger_count_an_agents_window_together() {
    let ledger: Arc<dyn SpendLedger> = Arc::new(MemorySpendLedger::new());
    let (a, b) = (sharing(&ledger), sharing(&ledger));
    let calls = (0..10).map(|n| ask_on(if n % 2 == 0 { &a } else { &b }));
    let results = futures::future::join_all(calls).await;
    let answered = results.iter().filter(|result| result.is_ok()).count();
    assert_eq!(answered, 3, "each alone would allow three: {results:?}");
    for refused in results.iter().filter_map(|result| result.as_ref().err()) {
        assert!(
            refused.contains("the agent's 3600-second model spend cap"),
            "refused for the window, not for another reason: {refused}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_given_ledger_counts_in_place_of_the_shared_databases() {
    let database = fresh_database().await;
    let ledger: Arc<dyn SpendLedger> = Arc::new(MemorySpendLedger::new());
    let (a, b) = (replica_with(&database, Some(&ledger)), replica(&database));
    // `a` counts in the given ledger, `b` in the database: each window has its three.
    for _ in 0..3 {
        assert!(ask_on(&a).await.is_ok());
    }
    let refused = ask_on(&a)
        .await
        .expect_err("the given ledger's window is spent");
    assert!(
        refused.contains("the agent's 3600-second model spend cap"),
        "{refused}"
    );
    // The given ledger holds the three calls, settled to their cost.
    let window = SharedWindow::new(Arc::clone(&ledger), "thinker", 1.0, 3600);
    match ledger.reserve(&window, 1.0).await.unwrap() {
        WindowReservation::Refused { spent_usd } => {
            assert!((spent_usd - 3.0 * COST).abs() < 1e-12, "{spent_usd}")
        }
        reserved => panic!("the ledger holds nothing: {reserved:?}"),
    }
    holds_no_calls(&database).await;
    for _ in 0..3 {
        assert!(ask_on(&b).await.is_ok());
    }
    holds_three_settled_calls(&database).await;
}

/// The shared ledger holds nothing of the agent's.
async fn holds_no_calls(database: &DatabaseConfig) {
    let row = session(database)
        .await
        .query_one("SELECT COUNT(*) FROM spend WHERE agent = 'thinker'", &[])
        .await
        .unwrap();
    assert_eq!(
        row.get::<_, i64>(0),
        0,
        "a call was counted in the database"
    );
}

/// The shared ledger holds the three answered calls, each settled to its cost: refused
/// calls left nothing reserved.
async fn holds_three_settled_calls(database: &DatabaseConfig) {
    let row = session(database)
        .await
        .query_one(
            "SELECT COUNT(*), SUM(usd), bool_and(settled) FROM spend WHERE agent = 'thinker'",
            &[],
        )
        .await
        .unwrap();
    let (calls, spent, settled): (i64, f64, bool) = (row.get(0), row.get(1), row.get(2));
    assert_eq!(calls, 3, "a refused call leaves nothing reserved");
    assert!((spent - 3.0 * COST).abs() < 1e-12, "{spent}");
    assert!(settled);
}
