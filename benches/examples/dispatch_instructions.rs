//! The dispatch benchmark's contenders, one per process, for counting instructions:
//! on a shared machine, time drifts with the neighbours' load and instruction counts do
//! not. Run each mode under callgrind and compare totals (BENCHMARKS.md has the command).
//!
//! `dispatch_instructions MODE [CALLS]`, MODE one of `nothing` (the set-up alone, to
//! subtract), `floor`, `engine` (`Engine::call`: look-up, the agent's equipment, the
//! guards, the call's context, serde) and `engine-await` (the same with an `.await`).

use std::hint::black_box;

use benchmarks::{weather, WeatherQuery, ARGUMENTS};
use engine_core::{Call, Engine};
use futures::executor::block_on;

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "engine".into());
    let calls: usize = args
        .next()
        .map_or(20_000, |n| n.parse().expect("a number of calls"));
    let engine = Engine::builder()
        .build()
        .expect("the bench plugin is valid");
    let session = engine.turn("default").expect("the default agent");
    let call = |tool: &str| {
        block_on(engine.call(&session, Call::new(black_box(tool), black_box(ARGUMENTS)))).unwrap()
    };
    for _ in 0..calls {
        let output = match mode.as_str() {
            "nothing" => String::new(),
            "floor" => {
                let query: WeatherQuery = serde_json::from_str(black_box(ARGUMENTS)).unwrap();
                serde_json::to_string(&block_on(weather(query))).unwrap()
            }
            "engine" => call("bench__weather"),
            "engine-await" => call("bench__weather_awaiting"),
            other => panic!("unknown mode `{other}`: nothing, floor, engine or engine-await"),
        };
        black_box(output);
    }
}
