//! Dispatch of one small tool, JSON text in to JSON text out, against the floor (serde and
//! a direct call); and, like with like, an MCP `tools/call` answered by engine-mcp's
//! handler against the same call answered by rmcp's `ToolRouter` and by hand with
//! serde_json alone (the MCP floor): each takes the parsed arguments rmcp hands a server
//! and gives the serialized `CallToolResult`.

use std::hint::black_box;

use benchmarks::{alternate, print_ratios, weather, Contender, WeatherQuery, ARGUMENTS};
use criterion::{criterion_group, Criterion};
use engine_core::{Call, Engine, Turn};
use futures::executor::block_on;
use serde_json::Value;

#[path = "../shared/mcp_call.rs"]
mod mcp_call;

use mcp_call::{
    engine_mcp_call, engine_mcp_server, floor_call as mcp_floor_call, rmcp_call, rmcp_peer,
    rmcp_router,
};

/// The arguments as a dispatcher receives them: text it cannot know at compile time.
/// Every contender reads them through `black_box`, so that none parses a constant the
/// optimizer could see through.
fn arguments() -> &'static str {
    black_box(ARGUMENTS)
}

/// The floor: what any dispatcher must at least do.
fn floor() -> String {
    let query: WeatherQuery = serde_json::from_str(arguments()).unwrap();
    let output = block_on(weather(query));
    serde_json::to_string(&output).unwrap()
}

/// `tool` through `Engine::call`, the one way in: look-up by wire name, the agent's
/// equipment, the guards, the call's context (only what the tool reads), serde.
fn engine(engine: &Engine, turn: &Turn, tool: &str) -> String {
    block_on(engine.call(turn, Call::new(black_box(tool), arguments()))).unwrap()
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let peer = rmcp_peer(&runtime);
    let router = rmcp_router();
    let agents = Engine::builder()
        .build()
        .expect("the bench plugin is valid");
    let session = agents.turn("default").expect("the default agent");

    // All three give the same forecast.
    let expected = floor();
    assert_eq!(engine(&agents, &session, "bench__weather"), expected);
    assert_eq!(
        engine(&agents, &session, "bench__weather_awaiting"),
        expected
    );
    assert!(rmcp_call(&router, &peer).contains(&expected[1..expected.len() - 1]));
    // Both MCP contenders answer the same result: the same content and structured content.
    let mcp = engine_mcp_server();
    let ours: Value = serde_json::from_str(&engine_mcp_call(&mcp, &peer)).unwrap();
    let theirs: Value = serde_json::from_str(&rmcp_call(&router, &peer)).unwrap();
    assert_eq!(ours, theirs, "the MCP results differ");
    let by_hand: Value = serde_json::from_str(&mcp_floor_call()).unwrap();
    assert_eq!(by_hand, theirs, "the MCP floor's result differs");

    let mut group = c.benchmark_group("dispatch");
    group.bench_function("floor: serde + direct call", |b| {
        b.iter(|| black_box(floor()))
    });
    group.bench_function("engine-core: Engine::call", |b| {
        b.iter(|| black_box(engine(&agents, &session, "bench__weather")))
    });
    group.bench_function("engine-mcp: tools/call", |b| {
        b.iter(|| black_box(engine_mcp_call(&mcp, &peer)))
    });
    group.bench_function("rmcp: stored ToolRouter", |b| {
        b.iter(|| black_box(rmcp_call(&router, &peer)))
    });
    group.bench_function("MCP floor: serde_json by hand", |b| {
        b.iter(|| black_box(mcp_floor_call()))
    });
    group.bench_function("rmcp: router rebuilt per call", |b| {
        b.iter(|| black_box(rmcp_call(&rmcp_router(), &peer)))
    });
    group.finish();

    let medians = alternate(
        &mut [
            Contender {
                name: "floor: serde + direct call",
                run: Box::new(|| drop(black_box(floor()))),
            },
            Contender {
                name: "engine-core: Engine::call",
                run: Box::new(|| drop(black_box(engine(&agents, &session, "bench__weather")))),
            },
            Contender {
                name: "engine-core, a body with .await",
                run: Box::new(|| {
                    drop(black_box(engine(
                        &agents,
                        &session,
                        "bench__weather_awaiting",
                    )))
                }),
            },
            Contender {
                name: "engine-mcp: tools/call",
                run: Box::new(|| drop(black_box(engine_mcp_call(&mcp, &peer)))),
            },
            Contender {
                name: "rmcp: stored ToolRouter",
                run: Box::new(|| drop(black_box(rmcp_call(&router, &peer)))),
            },
            Contender {
                name: "MCP floor: serde_json by hand",
                run: Box::new(|| drop(black_box(mcp_floor_call()))),
            },
            Contender {
                name: "rmcp: router rebuilt per call",
                run: Box::new(|| drop(black_box(rmcp_call(&rmcp_router(), &peer)))),
            },
        ],
        41,
        5_000,
    );
    print_ratios("dispatch of one small tool", &medians);
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(std::time::Duration::from_secs(3));
    targets = bench
}

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
