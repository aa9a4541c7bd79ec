//! What the benchmarks share: the small tool of the dispatch benchmark, the hooks of the
//! hook benchmark, generated tools for the start-up benchmark, and an interleaved timer
//! that reports ratios.
//!
//! Criterion measures each function on its own, one after the other; on a shared,
//! noisy machine the ratio between two of them is more trustworthy when they take turns.
//! [`alternate`] runs blocks of each function in rotation and compares medians.

use std::hint::black_box;
use std::time::{Duration, Instant};

use plugin_sdk::engine::{linked_tools, ToolDescriptor};
use plugin_sdk::prelude::*;

plugin_sdk::plugin! {
    namespace = "bench",
    engine = ">=0.1",
}

/// The arguments of the benchmark's tool.
#[derive(Debug, Deserialize, JsonSchema, ToolArgs)]
pub struct WeatherQuery {
    /// The city.
    pub city: String,
    /// How many days ahead.
    pub days: u8,
    /// `celsius` or `fahrenheit`; null for celsius.
    pub units: Option<String>,
}

/// The output of the benchmark's tool.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Forecast {
    /// The city.
    pub city: String,
    /// One temperature per day.
    pub temps: Vec<f32>,
}

/// The arguments every dispatch benchmark sends.
pub const ARGUMENTS: &str = r#"{"city":"Rome","days":3,"units":null}"#;

/// The tool body every contender calls: three temperatures, no I/O.
pub fn forecast(query: WeatherQuery) -> Forecast {
    let base = if query.units.as_deref() == Some("fahrenheit") {
        61.0
    } else {
        16.0
    };
    Forecast {
        city: query.city,
        temps: vec![base, base + 0.5, base - 0.5],
    }
}

/// Typical temperatures for a city.
#[define_tool(read_only)]
pub async fn weather(query: WeatherQuery) -> Forecast {
    forecast(query)
}

/// The same tool with an `.await` in its body (on a future that is already ready): it
/// takes the engine's async path, a boxed future polled once.
#[define_tool(read_only)]
pub async fn weather_awaiting(query: WeatherQuery) -> Forecast {
    std::future::ready(()).await;
    forecast(query)
}

/// The hook benchmark's plain function: it cannot suspend, so the engine runs it on the
/// blocking pool, where even a blocking hook can be left behind at its timeout.
#[define_hook(event = "message_received")]
pub fn observe_sync(event: &MessageReceived) -> PreModelOutcome {
    black_box(event.message());
    PreModelOutcome::Observe
}

/// The same hook with an `.await`: a future polled on the turn's own task.
#[define_hook(event = "message_received")]
pub async fn observe_async(event: &MessageReceived) -> PreModelOutcome {
    std::future::ready(()).await;
    black_box(event.message());
    PreModelOutcome::Observe
}

/// `count` distinct tools, each a copy of `weather` under its own name, in the bench
/// plugin.
pub fn generated_tools(count: usize) -> Vec<&'static ToolDescriptor> {
    let template = linked_tools()
        .find(|tool| tool.name == "weather")
        .expect("the bench tool is linked");
    (0..count)
        .map(|index| {
            let name: &'static str = Box::leak(format!("weather_{index:04}").into_boxed_str());
            &*Box::leak(Box::new(ToolDescriptor { name, ..*template }))
        })
        .collect()
}

/// The engine's start-up for `tools`: build and validate, and equip the default agent
/// (the catalogs are rendered on first use).
pub fn start_engine(tools: &[&'static ToolDescriptor]) -> engine_core::Engine {
    engine_core::Engine::builder()
        .tools(tools.iter().copied())
        .hooks([])
        .build()
        .expect("generated tools are valid")
}

/// What any SDK that derives schemas must do at least once: build each input schema.
pub fn schemas_only(tools: &[&'static ToolDescriptor]) {
    for tool in tools {
        black_box((tool.input_schema)());
    }
}

/// One contender of an interleaved comparison.
pub struct Contender<'a> {
    /// Its name in the report.
    pub name: &'static str,
    /// One call of the operation measured.
    pub run: Box<dyn FnMut() + 'a>,
}

/// The median time per call of each contender, measured in `rounds` rotations of
/// `block` calls each, so that each contender sees the same machine conditions.
pub fn alternate(
    contenders: &mut [Contender<'_>],
    rounds: usize,
    block: usize,
) -> Vec<(&'static str, Duration)> {
    let mut samples: Vec<Vec<Duration>> = vec![Vec::with_capacity(rounds); contenders.len()];
    for _ in 0..rounds {
        for (contender, samples) in contenders.iter_mut().zip(&mut samples) {
            let started = Instant::now();
            for _ in 0..block {
                (contender.run)();
            }
            samples.push(started.elapsed() / block as u32);
        }
    }
    contenders
        .iter()
        .zip(samples)
        .map(|(contender, mut samples)| {
            samples.sort();
            (contender.name, black_box(samples[samples.len() / 2]))
        })
        .collect()
}

/// Prints the medians of [`alternate`] with each one's ratio to the first (the baseline).
pub fn print_ratios(title: &str, medians: &[(&'static str, Duration)]) {
    let baseline = medians[0].1.as_secs_f64();
    println!(
        "\n{title} (interleaved medians, ratio to {}):",
        medians[0].0
    );
    for (name, median) in medians {
        println!(
            "  {name:<40} {:>10.3} µs  {:>7.2}x",
            median.as_secs_f64() * 1e6,
            median.as_secs_f64() / baseline
        );
    }
}
