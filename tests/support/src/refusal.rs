//! Shared by every refusal test: the engine in-process, and the fixture's engine binary
//! run as a process.

use std::process::Command;

use engine_core::{Engine, EngineError, StartupError};

/// Why an engine over everything this test binary linked refused to start; panics if it
/// started, or failed for another reason.
/// `engine config check`, which starts nothing, must refuse with the same report.
pub fn linked_refusal() -> StartupError {
    let error = match Engine::builder().build() {
        Err(EngineError::Startup(error)) => error,
        Err(other) => panic!("the engine failed for another reason: {other}"),
        Ok(_) => panic!("the engine must refuse this plugin"),
    };
    match Engine::builder().check() {
        Err(EngineError::Startup(checked)) => assert_eq!(checked.to_string(), error.to_string()),
        Err(other) => panic!("the check failed for another reason: {other}"),
        Ok(()) => panic!("the check passed a plugin start-up refuses"),
    }
    error
}

/// Runs `engine` and asserts that it refused to start with exactly `expected` as its
/// report: exit status 1, the report on stderr, nothing on stdout.
pub fn assert_engine_refuses(engine: &str, expected: &StartupError) {
    let output = Command::new(engine)
        .output()
        .expect("the fixture engine runs");
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        expected.to_string()
    );
    assert!(output.stdout.is_empty(), "the engine started: {output:?}");
}
