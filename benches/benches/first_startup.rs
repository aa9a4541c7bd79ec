//! One start-up of a fresh process, timed from `main`: `first_startup engine` builds an
//! engine over 1,000 generated tools (validation, every catalog, the default agent);
//! `first_startup schemas` only builds their input schemas, the least any SDK that
//! derives schemas does. `scripts/bench-first-startup` runs both in turn, in fresh
//! processes, and prints the medians.

use std::time::Instant;

use benchmarks::{generated_tools, schemas_only, start_engine};

fn main() {
    let what = std::env::args().nth(1).unwrap_or_else(|| "engine".into());
    let tools = generated_tools(1_000);
    // Timed until the engine is ready; its drop is not part of start-up.
    let started = Instant::now();
    let engine = match what.as_str() {
        "engine" => Some(std::hint::black_box(start_engine(&tools))),
        "schemas" => {
            schemas_only(&tools);
            None
        }
        other => panic!("unknown contender `{other}`: engine or schemas"),
    };
    let elapsed = started.elapsed();
    drop(engine);
    println!("{what} {:.3}", elapsed.as_secs_f64() * 1e3);
}
