//! 1,000 turns at once against a local streaming provider: the memory each turn holds,
//! and the latency the engine adds to each streamed event.
//!
//! The provider (axum, in this process, on its own thread and runtime) streams like a
//! model: a tool call in three pieces, then, once the call is answered, 20 pieces of
//! text 10 ms apart, each stamped with the moment it was written. The engine's turns run
//! on a two-worker runtime (this machine's cores); each `chat` event's latency is the
//! time from the stamp to the event reaching the turn's callback: the server's send,
//! loopback, the HTTP client, SSE assembly and the turn. Memory per turn is the peak
//! resident size during the run over the size before it, divided by the turns.
//!
//! The floor runs the same turns by hand on the same client (reqwest): two requests,
//! the SSE split by lines, each chunk into a small struct, the tool body called directly.
//! Each run is a fresh process of this benchmark (`--only floor|engine`), so that memory
//! a run's allocator kept cannot serve the next; they alternate, twice each.
//!
//! `cargo bench -p benchmarks --bench concurrent_turns [-- TURNS]`

mod common;

use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::routing::post;
use axum::Router;
use common::chunk;
use engine_core::{Engine, Stop, TurnControl, TurnEvent};
use serde_json::Value;

static START: OnceLock<Instant> = OnceLock::new();

fn since_start() -> u64 {
    START.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

async fn completions(body: String) -> axum::response::Response {
    let request: Value = serde_json::from_str(&body).expect("a JSON request");
    let answered = request["messages"]
        .as_array()
        .and_then(|messages| messages.last())
        .is_some_and(|last| last["role"] == "tool");
    let stream = async_stream(answered);
    axum::response::Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(stream))
        .expect("a response")
}

fn async_stream(
    answered: bool,
) -> impl futures::Stream<Item = Result<String, std::convert::Infallible>> {
    futures::stream::unfold(0usize, move |step| async move {
        let text_pieces = 20;
        let piece = if !answered {
            match step {
                0 => chunk(
                    r#"{"tool_calls":[{"index":0,"id":"call_0","type":"function","function":{"name":"bench__weather","arguments":""}}]}"#,
                    "null",
                ),
                1 => chunk(
                    r#"{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":\"Rome\","}}]}"#,
                    "null",
                ),
                2 => chunk(
                    r#"{"tool_calls":[{"index":0,"function":{"arguments":"\"days\":3,\"units\":null}"}}]}"#,
                    "null",
                ),
                3 => chunk("{}", "\"tool_calls\"") + "data: [DONE]\n\n",
                _ => return None,
            }
        } else if step < text_pieces {
            tokio::time::sleep(Duration::from_millis(10)).await;
            chunk(&format!(r#"{{"content":"{} "}}"#, since_start()), "null")
        } else if step == text_pieces {
            chunk("{}", "\"stop\"") + "data: [DONE]\n\n"
        } else {
            return None;
        };
        Some((Ok(piece), step + 1))
    })
}

/// Starts the provider on its own thread; answers its base URL.
fn provider() -> String {
    common::serve(Router::new().route("/v1/chat/completions", post(completions)))
}

fn engine(base_url: &str) -> Engine {
    Engine::builder()
        .backends(engine_providers::backends(engine_sqlite::backends(
            engine_core::Backends::NONE,
        )))
        .config(common::one_agent(base_url))
        .hooks([])
        .build()
        .expect("the engine starts")
}

/// The process's resident size now, and its peak, in KiB.
fn rss_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// The floor's turn: what the engine does, by hand, without anything else.
async fn floor_turn(client: &reqwest::Client, url: &str, mut on_text: impl FnMut(&str)) {
    #[derive(serde::Deserialize)]
    struct Chunk {
        choices: Vec<Choice>,
    }
    #[derive(serde::Deserialize)]
    struct Choice {
        delta: Delta,
    }
    #[derive(serde::Deserialize)]
    struct Delta {
        content: Option<String>,
        tool_calls: Option<Vec<CallPiece>>,
    }
    #[derive(serde::Deserialize)]
    struct CallPiece {
        id: Option<String>,
        function: Option<Function>,
    }
    #[derive(serde::Deserialize)]
    struct Function {
        arguments: Option<String>,
    }
    let mut messages = vec![serde_json::json!({"role": "user", "content": "Weather in Rome?"})];
    for _ in 0..2 {
        let body = serde_json::json!({"model": "bench", "messages": messages, "stream": true});
        let request = client.post(url).header("content-type", "application/json");
        let mut response = request
            .body(body.to_string())
            .send()
            .await
            .expect("an answer");
        let (mut buffer, mut id, mut arguments) = (Vec::new(), String::new(), String::new());
        while let Some(bytes) = response.chunk().await.expect("a stream") {
            buffer.extend_from_slice(&bytes);
            while let Some(end) = buffer.windows(2).position(|pair| pair == b"\n\n") {
                let event: Vec<u8> = buffer.drain(..end + 2).collect();
                let data = std::str::from_utf8(&event).expect("UTF-8").trim();
                let Some(data) = data.strip_prefix("data: ") else {
                    continue;
                };
                if data == "[DONE]" {
                    continue;
                }
                let chunk: Chunk = serde_json::from_str(data).expect("a chunk");
                for choice in chunk.choices {
                    if let Some(text) = choice.delta.content {
                        on_text(&text);
                    }
                    for piece in choice.delta.tool_calls.into_iter().flatten() {
                        id.extend(piece.id);
                        arguments.extend(piece.function.and_then(|function| function.arguments));
                    }
                }
            }
        }
        if id.is_empty() {
            return;
        }
        let query: benchmarks::WeatherQuery = serde_json::from_str(&arguments).expect("arguments");
        let output = serde_json::to_string(&benchmarks::forecast(query)).expect("an output");
        messages.push(serde_json::json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": id, "type": "function", "function": {"name": "bench__weather", "arguments": arguments}}]}));
        messages.push(serde_json::json!({"role": "tool", "tool_call_id": id, "content": output}));
    }
}

/// What one run of `turns` concurrent turns measured.
struct Measured {
    took: Duration,
    per_turn_kib: f64,
    latencies: Vec<u64>,
}

impl Measured {
    fn print(&self, name: &str) {
        let turns = self.latencies.len() / 20;
        println!(
            "  {name:<7} wall {:.2} s, memory per turn {:.1} KiB, event latency p50 {} µs, p99 {} µs, max {} µs ({} events of {turns} turns)",
            self.took.as_secs_f64(),
            self.per_turn_kib,
            percentile(&self.latencies, 0.50) / 1000,
            percentile(&self.latencies, 0.99) / 1000,
            self.latencies.last().copied().unwrap_or(0) / 1000,
            self.latencies.len()
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let turns: usize = args.iter().find_map(|arg| arg.parse().ok()).unwrap_or(1000);
    let only = args
        .iter()
        .position(|arg| arg == "--only")
        .map(|at| args[at + 1].clone());
    let Some(only) = only else {
        println!("{turns} concurrent turns (a tool call, then 20 text events 10 ms apart), 2 worker threads, each run in a fresh process");
        for name in ["floor", "engine", "floor", "engine"] {
            let status = std::process::Command::new(std::env::current_exe().expect("this program"))
                .args(["--only", name, &turns.to_string()])
                .status()
                .expect("the run starts");
            assert!(status.success(), "the {name} run failed");
        }
        return;
    };
    since_start();
    let base_url = provider();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let engine = Arc::new(engine(&base_url));
    let client = reqwest::Client::new();
    let url = format!("{base_url}/chat/completions");
    // One run of `count` concurrent turns, by the engine or by the floor.
    let run = |count: usize, by_engine: bool| {
        let latencies = Arc::new(Mutex::new(Vec::with_capacity(count * 20)));
        let _ = std::fs::write("/proc/self/clear_refs", "5"); // the peak, reset to now
        let (before, _) = rss_kib();
        let started = Instant::now();
        runtime.block_on(async {
            let mut all = tokio::task::JoinSet::new();
            for _ in 0..count {
                let (engine, client, url) = (Arc::clone(&engine), client.clone(), url.clone());
                let latencies = Arc::clone(&latencies);
                all.spawn(async move {
                    let mut mine = Vec::with_capacity(20);
                    let mut seen = |text: &str| {
                        let now = since_start();
                        let stamp: u64 = text.trim().parse().expect("a stamp");
                        mine.push(now - stamp);
                    };
                    if by_engine {
                        let turn = engine.turn("bench").expect("the agent");
                        let summary = engine
                            .converse(
                                &turn,
                                Some("Weather in Rome?"),
                                &TurnControl::default(),
                                &mut |event| {
                                    if let TurnEvent::Chat { text } = event {
                                        seen(&text);
                                    }
                                },
                            )
                            .await;
                        assert_eq!(summary.stop, Stop::Answered, "{summary:?}");
                    } else {
                        floor_turn(&client, &url, seen).await;
                    }
                    latencies.lock().expect("not poisoned").extend(mine);
                });
            }
            while let Some(done) = all.join_next().await {
                done.expect("a turn ran");
            }
        });
        let took = started.elapsed();
        let (_, peak) = rss_kib();
        let mut latencies = std::mem::take(&mut *latencies.lock().expect("not poisoned"));
        latencies.sort_unstable();
        assert_eq!(latencies.len(), count * 20, "every text event was seen");
        Measured {
            took,
            per_turn_kib: peak.saturating_sub(before) as f64 / count as f64,
            latencies,
        }
    };
    let by_engine = only == "engine";
    run(50, by_engine); // warm-up: connections
    run(turns, by_engine).print(&only);
}
