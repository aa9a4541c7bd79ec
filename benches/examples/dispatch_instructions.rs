//! The dispatch benchmark's contenders, one per process, for counting instructions:
//! on a shared machine, time drifts with the neighbours' load and instruction counts do
//! not. Run each mode under callgrind and compare totals (BENCHMARKS.md has the command).
//!
//! `dispatch_instructions MODE [CALLS]`, MODE one of `nothing` (the set-up alone, to
//! subtract), `floor`, `engine`, `engine-await`, `agent` (`Engine::call`: the agent's
//! equipment and the call's context, then the same dispatch).

use std::hint::black_box;

use benchmarks::{weather, WeatherQuery, ARGUMENTS};
use engine_core::{Call, Engine, EngineConfig, Registry, Stores, ToolCall};
use futures::executor::block_on;
use plugin_sdk::ToolContext;

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "engine".into());
    let calls: usize = args
        .next()
        .map_or(20_000, |n| n.parse().expect("a number of calls"));
    let registry = Registry::linked().expect("the bench plugin is valid");
    let context = ToolContext::new();
    let config = EngineConfig::load(None, std::iter::empty()).expect("the default agent");
    let agents = Engine::new(
        std::sync::Arc::new(Registry::linked().expect("the bench plugin is valid")),
        &config,
        Stores::default(),
    );
    let session = agents.session("default").expect("the default agent");
    let engine = |tool: &str| {
        block_on(registry.call(Call::new(black_box(tool), black_box(ARGUMENTS), &context))).unwrap()
    };
    for _ in 0..calls {
        let output = match mode.as_str() {
            "nothing" => String::new(),
            "floor" => {
                let query: WeatherQuery = serde_json::from_str(black_box(ARGUMENTS)).unwrap();
                serde_json::to_string(&block_on(weather(query))).unwrap()
            }
            "engine" => engine("bench__weather"),
            "engine-await" => engine("bench__weather_awaiting"),
            "agent" => block_on(agents.call(
                &session,
                ToolCall::new(black_box("bench__weather"), black_box(ARGUMENTS)),
            ))
            .unwrap(),
            other => {
                panic!("unknown mode `{other}`: nothing, floor, engine, engine-await or agent")
            }
        };
        black_box(output);
    }
}
