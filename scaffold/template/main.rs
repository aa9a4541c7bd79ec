//! {{name}}: an engine image. Its plugins are the dependencies in Cargo.toml; build.rs
//! names each once here, which is what links it.

use std::process::ExitCode;

include!(concat!(env!("OUT_DIR"), "/plugins.rs"));

fn main() -> ExitCode {
    // SAFETY: the first thing `main` does; no other thread exists yet.
    unsafe { engine_cli::run(engine_cli::image!({{about}}), engine::default_backends()) }
}
