//! Shared by the MCP tests: runs `tests/mcp/client.py` (the official Python MCP client)
//! against an engine binary, over stdio or streamable HTTP, and returns its report.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::{json, Value};

/// How the client reaches the engine.
#[derive(Clone, Copy, Debug)]
pub enum Transport {
    /// The client starts `engine mcp` and speaks over its stdin and stdout.
    Stdio,
    /// The test starts `engine serve --addr 127.0.0.1:0`; the client posts to its URL.
    Http,
}

pub const BOTH: [Transport; 2] = [Transport::Stdio, Transport::Http];

/// A served engine, killed when dropped.
pub struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `engine serve` on a free port and answers its URL, read from its first line.
fn serve(engine: &str, extra: &[&str]) -> (Served, String) {
    serve_with_env(engine, extra, &[])
}

/// Starts `engine serve` on a free port with `extra` arguments and `env` variables (such
/// as its token), and answers its URL, read from its first line.
pub fn serve_with_env(engine: &str, extra: &[&str], env: &[(&str, &str)]) -> (Served, String) {
    let mut child = Command::new(engine)
        .args(["serve", "--addr", "127.0.0.1:0"])
        .args(extra)
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the engine starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .expect("the engine prints its URL");
    assert!(line.starts_with("http://127.0.0.1:"), "not a URL: {line:?}");
    (Served(child), line.trim().to_owned())
}

/// Runs `steps` (see client.py) against `engine` started with `extra` arguments (such as
/// `--timeout-ms`), and answers the report.
pub fn drive(engine: &str, extra: &[&str], transport: Transport, steps: Value) -> Value {
    drive_with_headers(engine, extra, transport, json!({}), steps)
}

/// [`drive`], with HTTP `headers` on every request (ignored over stdio).
pub fn drive_with_headers(
    engine: &str,
    extra: &[&str],
    transport: Transport,
    headers: Value,
    steps: Value,
) -> Value {
    let (_served, server) = match transport {
        Transport::Stdio => {
            let mut command = vec![engine, "mcp"];
            command.extend_from_slice(extra);
            (None, json!({ "stdio": command }))
        }
        Transport::Http => {
            let (served, url) = serve(engine, extra);
            (Some(served), json!({ "url": url, "headers": headers }))
        }
    };
    run_client(json!({ "server": server, "steps": steps }))
}

/// Runs client.py with `plan` (its server, its steps and options) and answers the report.
pub fn run_client(plan: Value) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../mcp/client.py");
    let mut client = Command::new(crate::python(
        "the MCP tests need Python with the `mcp` package",
    ))
    .arg(script)
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("the Python client starts");
    client
        .stdin
        .take()
        .unwrap()
        .write_all(plan.to_string().as_bytes())
        .unwrap();
    let output = client.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "the client failed over {}:\n{}",
        plan["server"],
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("the client's JSON report")
}
