//! Shared by every refusal test: the engine binary of the fixture, run as a process.

use std::process::Command;

use engine_core::StartupError;

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
