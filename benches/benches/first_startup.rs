//! One start-up of a fresh process, timed from `main`: `first_startup engine` builds an
//! engine over 1,000 generated tools (validation, the default agent); `first_startup
//! schemas` only builds their input schemas, the least any SDK that derives schemas does;
//! `first_startup openai`, `gemini` and `mcp` build the engine untimed and time the first
//! rendering of that catalog, which start-up leaves to first use (Gemini's converts every
//! schema; MCP's builds the output schemas). `scripts/bench-first-startup` runs them in
//! turn, in fresh processes, and prints the medians.

use std::time::Instant;

use benchmarks::{generated_tools, schemas_only, start_engine};
use engine_core::Format;

fn main() {
    let what = std::env::args().nth(1).unwrap_or_else(|| "engine".into());
    let tools = generated_tools(1_000);
    if let Some(format) = [Format::OpenAi, Format::Gemini, Format::Mcp]
        .into_iter()
        .find(|format| format.as_str() == what)
    {
        let engine = start_engine(&tools);
        let started = Instant::now();
        std::hint::black_box(engine.catalog(format, "en-US"));
        println!("{what} {:.3}", started.elapsed().as_secs_f64() * 1e3);
        return;
    }
    // Timed until the engine is ready; its drop is not part of start-up.
    let started = Instant::now();
    let engine = match what.as_str() {
        "engine" => Some(std::hint::black_box(start_engine(&tools))),
        "schemas" => {
            schemas_only(&tools);
            None
        }
        other => panic!("unknown contender `{other}`: engine, schemas, openai, gemini or mcp"),
    };
    let elapsed = started.elapsed();
    drop(engine);
    println!("{what} {:.3}", elapsed.as_secs_f64() * 1e3);
}
