//! Replicas on one PostgreSQL: turns per second with one engine on SQLite, one on
//! PostgreSQL, and two sharing PostgreSQL; then each store operation on PostgreSQL
//! against SQLite. Needs the server `scripts/bench-replicas` starts
//! (`PLUGIN_SDK_POSTGRES_URL`, `PLUGIN_SDK_POSTGRES_PASSWORD`).
//!
//! The provider answers at once (axum, in this process, on its own thread): a tool call,
//! then, once it is answered, a short reply. The turns run on a two-worker runtime, 16
//! conversations at a time, each turn of a conversation on one of the replicas at random.
//! Two replicas here are two engines in one process, on this machine's two cores: they
//! cannot add compute, and show what sharing the conversations' lock and history through
//! the database costs. Contenders run interleaved, a block each per round; medians.
//!
//! `cargo bench -p benchmarks --bench replicas [-- ROUNDS]`

mod common;

use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::routing::post;
use axum::Router;
use common::chunk;
use engine_core::config::{ArtifactLimits, DatabaseConfig, KnowledgeLimits};
use engine_core::conversation::Message;
use engine_core::stores::{Conversations, MemoryArtifacts};
use engine_core::{Engine, Stop, TurnControl};
use engine_postgres::{Postgres, PostgresArtifacts, PostgresConversations, PostgresKnowledge};
use engine_sqlite::SqliteKnowledge;
use plugin_sdk::artifacts::Artifact;
use plugin_sdk::engine::{ArtifactStore, KnowledgeStore, Scope};
use plugin_sdk::knowledge::KnowledgeLevel;
use serde_json::Value;

const CONVERSATIONS: usize = 16;
const TURNS_EACH: usize = 4;
const OPS: usize = 200;

/// A tool call, or (after its answer) a reply, in one response.
async fn completions(body: String) -> axum::response::Response {
    let request: Value = serde_json::from_str(&body).expect("a JSON request");
    let answered = request["messages"]
        .as_array()
        .and_then(|messages| messages.last())
        .is_some_and(|last| last["role"] == "tool");
    let text = if answered {
        chunk(r#"{"content":"Sunny in Rome."}"#, "null") + &chunk("{}", "\"stop\"")
    } else {
        chunk(
            r#"{"tool_calls":[{"index":0,"id":"call_0","type":"function","function":{"name":"bench__weather","arguments":"{\"city\":\"Rome\",\"days\":3,\"units\":null}"}}]}"#,
            "null",
        ) + &chunk("{}", "\"tool_calls\"")
    };
    axum::response::Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from(text + "data: [DONE]\n\n"))
        .expect("a response")
}

fn provider() -> String {
    common::serve(Router::new().route("/v1/chat/completions", post(completions)))
}

/// A fresh database on the benchmark's server.
fn database(name: &str) -> DatabaseConfig {
    let server = std::env::var("PLUGIN_SDK_POSTGRES_URL")
        .expect("PLUGIN_SDK_POSTGRES_URL: run `bash scripts/bench-replicas`");
    let status = std::process::Command::new("psql")
        .args([
            &server,
            "-X",
            "-q",
            "-c",
            &format!("DROP DATABASE IF EXISTS {name}"),
        ])
        .args(["-c", &format!("CREATE DATABASE {name}")])
        .env(
            "PGPASSWORD",
            std::env::var("PLUGIN_SDK_POSTGRES_PASSWORD").unwrap_or_default(),
        )
        .status()
        .expect("psql runs");
    assert!(status.success());
    DatabaseConfig {
        url: format!("{}/{name}", server.rsplit_once('/').unwrap().0),
        password_env: "PLUGIN_SDK_POSTGRES_PASSWORD".into(),
        max_connections: 32,
        timeout_ms: 5000,
        sweep_secs: 30,
    }
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("bench-replicas-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn engine(base_url: &str, data_dir: &std::path::Path, database: Option<&DatabaseConfig>) -> Engine {
    let mut config = common::one_agent(base_url);
    config.data_dir = Some(data_dir.to_owned());
    config.database = database.cloned();
    Engine::builder()
        .backends(engine_providers::backends(engine_postgres::backends(
            engine_sqlite::backends(engine_core::Backends::NONE),
        )))
        .config(config)
        .hooks([])
        .build()
        .expect("the engine starts")
}

/// Runs [`TURNS_EACH`] turns of each of [`CONVERSATIONS`] new conversations, each turn on
/// one of `replicas` at random: turns per second.
async fn block(replicas: &[Arc<Engine>], round: usize) -> f64 {
    let started = Instant::now();
    let conversations = (0..CONVERSATIONS).map(|n| {
        let replicas = replicas.to_vec();
        tokio::spawn(async move {
            let conversation = format!("r{round}-c{n}");
            let mut seed = (round * 7919 + n * 104_729 + 1) as u64;
            for _ in 0..TURNS_EACH {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                let engine = &replicas[(seed >> 33) as usize % replicas.len()];
                let turn = engine
                    .turn("bench")
                    .unwrap()
                    .in_conversation("u", conversation.clone());
                let summary = engine
                    .converse(
                        &turn,
                        Some("Weather in Rome?"),
                        &TurnControl::default(),
                        &mut |_| {},
                    )
                    .await;
                assert_eq!(summary.stop, Stop::Answered, "{summary:?}");
            }
        })
    });
    for conversation in futures::future::join_all(conversations).await {
        conversation.expect("a conversation ran");
    }
    (CONVERSATIONS * TURNS_EACH) as f64 / started.elapsed().as_secs_f64()
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// One replica's stores, to time each operation.
struct Stores {
    conversations: Conversations,
    artifacts: Arc<dyn ArtifactStore>,
    knowledge: Arc<dyn KnowledgeStore>,
}

fn sqlite_stores() -> Stores {
    let dir = scratch("stores");
    Stores {
        conversations: engine_sqlite::open_conversations(&dir.join("conversations.sqlite"))
            .unwrap(),
        artifacts: Arc::new(MemoryArtifacts::new(ArtifactLimits::default())),
        knowledge: Arc::new(
            SqliteKnowledge::open(&dir.join("knowledge.sqlite"), KnowledgeLimits::default())
                .unwrap(),
        ),
    }
}

fn postgres_stores() -> Stores {
    let database = Arc::new(Postgres::connect(&database("bench_stores")).unwrap());
    Stores {
        artifacts: Arc::new(PostgresArtifacts::new(
            Arc::clone(&database),
            ArtifactLimits::default(),
        )),
        knowledge: Arc::new(PostgresKnowledge::new(
            Arc::clone(&database),
            KnowledgeLimits::default(),
        )),
        conversations: Conversations::new(PostgresConversations::new(database)),
    }
}

const KINDS: [&str; 5] = [
    "append a message (a turn's step)",
    "load 20 messages",
    "begin and end a turn",
    "put and take a 1 KiB artifact",
    "search 100 documents",
];

/// Each kind of operation [`OPS`] times, one after another: microseconds per operation.
async fn store_ops(stores: &Stores, round: usize) -> [f64; 5] {
    let scope = Scope::plugin("bench", "bench", KnowledgeLevel::Write);
    let per_op = |started: Instant| started.elapsed().as_secs_f64() * 1e6 / OPS as f64;
    let store = &stores.conversations;
    // A turn's steps, each one message, on the turn's lease.
    let mut lease = store
        .begin_turn(&format!("a{round}"))
        .await
        .unwrap()
        .unwrap();
    let started = Instant::now();
    for at in 0..OPS {
        store
            .append(&mut lease, at, &[Message::user("hello")])
            .await
            .unwrap();
    }
    let append = per_op(started);
    store.end_turn(lease, None).await.unwrap();
    let long = format!("long{round}");
    let mut lease = store.begin_turn(&long).await.unwrap().unwrap();
    let words = vec![Message::user("a message of a few words"); 20];
    store.append(&mut lease, 0, &words).await.unwrap();
    store.end_turn(lease, None).await.unwrap();
    let started = Instant::now();
    for _ in 0..OPS {
        assert_eq!(store.load(&long).await.unwrap().len(), 20);
    }
    let load = per_op(started);
    let started = Instant::now();
    for n in 0..OPS {
        let lease = store
            .begin_turn(&format!("t{round}-{n}"))
            .await
            .unwrap()
            .unwrap();
        store.end_turn(lease, None).await.unwrap();
    }
    let turn = per_op(started);
    let started = Instant::now();
    for n in 0..OPS {
        let artifact = Artifact {
            bytes: vec![b'x'; 1024],
            filename: format!("f{n}.txt"),
            mime: "text/plain".into(),
        };
        let handle = stores.artifacts.put("c", artifact, None).await.unwrap();
        assert!(stores.artifacts.take("c", &handle).await.unwrap().is_some());
    }
    let artifact = per_op(started);
    if round == 0 {
        for n in 0..100 {
            let text = format!("Document {n} says refunds take {n} days, and parcels ship daily.");
            stores
                .knowledge
                .write(&scope, &format!("d{n}.md"), &text)
                .await
                .unwrap();
        }
    }
    let started = Instant::now();
    for _ in 0..OPS {
        assert!(!stores
            .knowledge
            .search(&scope, "refunds days", 10)
            .await
            .unwrap()
            .is_empty());
    }
    let search = per_op(started);
    [append, load, turn, artifact, search]
}

fn main() {
    let rounds: usize = std::env::args()
        .skip(1)
        .find_map(|arg| arg.parse().ok())
        .unwrap_or(11);
    let url = provider();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let (shared_one, shared_two) = (database("bench_one"), database("bench_two"));
    let sqlite = vec![Arc::new(engine(&url, &scratch("sqlite"), None))];
    let one = vec![Arc::new(engine(&url, &scratch("one"), Some(&shared_one)))];
    let two = vec![
        Arc::new(engine(&url, &scratch("two-a"), Some(&shared_two))),
        Arc::new(engine(&url, &scratch("two-b"), Some(&shared_two))),
    ];
    let contenders = [
        ("1 engine, SQLite", &sqlite),
        ("1 replica, PostgreSQL", &one),
        ("2 replicas, one PostgreSQL", &two),
    ];
    let mut rates = vec![Vec::new(); contenders.len()];
    runtime.block_on(async {
        // A warm-up block each.
        for (_, replicas) in &contenders {
            block(replicas, usize::MAX / 2).await;
        }
        for round in 0..rounds {
            for (index, (_, replicas)) in contenders.iter().enumerate() {
                rates[index].push(block(replicas, round).await);
            }
        }
    });
    println!("turns per second ({CONVERSATIONS} conversations at a time, {TURNS_EACH} turns each, median of {rounds} rounds):");
    for (index, (name, _)) in contenders.iter().enumerate() {
        println!("  {name:<28} {:>8.0}", median(&mut rates[index]));
    }

    let (sqlite, postgres) = (
        sqlite_stores(),
        runtime.block_on(async { postgres_stores() }),
    );
    let mut times = [vec![Vec::new(); KINDS.len()], vec![Vec::new(); KINDS.len()]];
    runtime.block_on(async {
        for round in 0..rounds {
            for (backend, stores) in [&sqlite, &postgres].into_iter().enumerate() {
                for (kind, micros) in store_ops(stores, round).await.into_iter().enumerate() {
                    times[backend][kind].push(micros);
                }
            }
        }
    });
    println!("store operations, µs each (median of {rounds} rounds of {OPS}):");
    println!("  {:<32} {:>10} {:>12}", "", "SQLite", "PostgreSQL");
    for (kind, name) in KINDS.iter().enumerate() {
        let sqlite = median(&mut times[0][kind]);
        let postgres = median(&mut times[1][kind]);
        println!("  {name:<32} {sqlite:>10.1} {postgres:>12.1}");
    }
}
