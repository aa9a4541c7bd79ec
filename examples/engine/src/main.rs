//! An engine image: the plugins it links are the plugins it has.

use std::process::ExitCode;

// Linking is installing: name each plugin crate once so the linker keeps it.
use acme_crm as _;
use calendar as _;
use contacts as _;
use engine_builtins as _;
use guard as _;
use notes as _;
use weather as _;
use webhook as _;

fn main() -> ExitCode {
    // SAFETY: the first thing `main` does; no other thread exists yet.
    unsafe {
        engine_cli::run(
            engine_cli::image!("An example engine built from engine-core and the example plugins"),
            engine::default_backends(),
        )
    }
}
