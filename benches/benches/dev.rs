//! A call through a dev session against the same tool linked: `Engine::call` of the
//! bench's `weather` for an agent that equips it linked, and for one whose dev session
//! (this process, over a WebSocket on loopback, through `engine serve`'s route) replaces
//! it. Each call timed on its own, the two taking turns; medians and p99s.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use benchmarks::ARGUMENTS;
use engine_core::config::EngineConfig;
use engine_core::{Call, Engine, Turn};

const ROUNDS: usize = 200;
const BLOCK: usize = 25;

fn call(runtime: &tokio::runtime::Runtime, engine: &Engine, turn: &Turn) -> Duration {
    let started = Instant::now();
    let output = runtime
        .block_on(engine.call(
            turn,
            Call::new(black_box("bench__weather"), black_box(ARGUMENTS)),
        ))
        .unwrap();
    let took = started.elapsed();
    black_box(output);
    took
}

fn percentile(samples: &mut [Duration], fraction: f64) -> Duration {
    samples.sort();
    let at = ((samples.len() as f64 * fraction).ceil() as usize).clamp(1, samples.len()) - 1;
    samples[at]
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let dir = std::env::temp_dir().join(format!("bench-dev-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let config = EngineConfig::parse("[agents.linked]\n[agents.dev]\n").unwrap();
    let engine = Arc::new(Engine::builder().config(config).build().unwrap());
    let tokens = engine_server::DevTokens::in_dir(&dir);
    let (token, _) = tokens.issue("dev", Duration::from_secs(3600)).unwrap();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let address = listener.local_addr().unwrap();
    let server = engine_mcp::McpServer::new(
        Arc::clone(&engine),
        "linked",
        engine_mcp::Options::default(),
    )
    .unwrap();
    let options = engine_server::HttpOptions {
        dev_tokens: Some(tokens),
        ..Default::default()
    };
    let shutdown = tokio_util::sync::CancellationToken::new();
    runtime.spawn(engine_server::serve(
        server,
        listener,
        options,
        shutdown.clone(),
    ));
    let session =
        plugin_dev::DevOptions::new(format!("http://{address}"), "dev", token).reconnect(false);
    runtime.spawn(plugin_dev::serve(session));
    let dev_agent = || engine.agent("dev").unwrap();
    let waited = Instant::now();
    while dev_agent().dev_tools().is_empty() {
        assert!(
            waited.elapsed() < Duration::from_secs(10),
            "the session never opened"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let linked = engine.turn("linked").unwrap();
    let dev = engine.turn("dev").unwrap();
    assert_eq!(
        runtime
            .block_on(engine.call(&dev, Call::new("bench__weather", ARGUMENTS)))
            .unwrap(),
        runtime
            .block_on(engine.call(&linked, Call::new("bench__weather", ARGUMENTS)))
            .unwrap(),
        "the session's tool answers as the linked one"
    );
    let mut samples = [Vec::new(), Vec::new()];
    for _ in 0..ROUNDS {
        for (turn, samples) in [&linked, &dev].into_iter().zip(&mut samples) {
            for _ in 0..BLOCK {
                samples.push(call(&runtime, &engine, turn));
            }
        }
    }
    println!(
        "\na call of bench:weather, linked and through a dev session on loopback ({} calls each, interleaved in blocks of {BLOCK}):",
        ROUNDS * BLOCK
    );
    let mut linked_median = None;
    for (name, samples) in ["linked: Engine::call", "dev session: Engine::call"]
        .into_iter()
        .zip(&mut samples)
    {
        let median = percentile(samples, 0.5);
        let p99 = percentile(samples, 0.99);
        let ratio = median.as_secs_f64() / linked_median.get_or_insert(median).as_secs_f64();
        println!(
            "  {name:<28} median {:>9.2} µs  p99 {:>9.2} µs  {ratio:>7.1}x",
            median.as_secs_f64() * 1e6,
            p99.as_secs_f64() * 1e6
        );
    }
    shutdown.cancel();
    let _ = std::fs::remove_dir_all(dir);
}
