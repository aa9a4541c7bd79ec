//! The example engine's command line with only the leaking tools linked.

use std::process::ExitCode;

use secret_leaks as _;

fn main() -> ExitCode {
    // SAFETY: the first thing `main` does; no other thread exists yet.
    unsafe {
        engine_cli::run(
            engine_cli::image!("An engine with only the leaking tools linked"),
            engine::default_backends(),
        )
    }
}
