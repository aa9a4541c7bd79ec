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
    let started = Instant::now();
    match what.as_str() {
        "engine" => drop(std::hint::black_box(start_engine(&tools))),
        "schemas" => schemas_only(&tools),
        other => panic!("unknown contender `{other}`: engine or schemas"),
    }
    println!("{what} {:.3}", started.elapsed().as_secs_f64() * 1e3);
}
