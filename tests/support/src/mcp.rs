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

/// A served engine, killed when dropped. What it writes to stderr is kept, so a failing
/// test shows the server's side too.
pub struct Served {
    child: Child,
    stderr: Option<std::thread::JoinHandle<()>>,
    /// What it has written to stderr so far, line by line.
    written: std::sync::Arc<std::sync::Mutex<String>>,
}

impl Served {
    /// Stops the engine and answers everything it wrote to stderr.
    pub fn stop(mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let reader = self.stderr.take().expect("stopped once");
        let _ = reader.join();
        self.stderr_so_far()
    }

    /// The engine's process id (to signal it).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What the engine has written to stderr so far.
    pub fn stderr_so_far(&self) -> String {
        self.written.lock().unwrap().clone()
    }

    /// Waits up to 20 seconds for a line of stderr that contains `text`; answers the
    /// whole of stderr then, or panics with it.
    pub fn wait_for_stderr(&self, text: &str) -> String {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            let written = self.stderr_so_far();
            if written.contains(text) {
                return written;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no {text:?} on the engine's stderr:\n{written}"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `engine serve` on a free port and answers its URL, read from its first line.
pub fn serve(engine: &str, extra: &[&str]) -> (Served, String) {
    serve_with_env(engine, extra, &[])
}

/// Starts `engine serve` on a free port with `extra` arguments and `env` variables (such
/// as its token), and answers its URL, read from its first line.
pub fn serve_with_env(engine: &str, extra: &[&str], env: &[(&str, &str)]) -> (Served, String) {
    serve_at(engine, "127.0.0.1:0", extra, env)
}

/// [`serve_with_env`] on `addr`: for a test whose configuration names the engine's URL
/// before it starts (the OAuth broker's `public_url`).
pub fn serve_at(
    engine: &str,
    addr: &str,
    extra: &[&str],
    env: &[(&str, &str)],
) -> (Served, String) {
    let mut child = Command::new(engine)
        .args(["serve", "--addr", addr])
        .args(extra)
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the engine starts");
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let written = std::sync::Arc::<std::sync::Mutex<String>>::default();
    let to_reader = std::sync::Arc::clone(&written);
    let stderr = std::thread::spawn(move || {
        for line in stderr.lines() {
            let Ok(line) = line else { return };
            let mut written = to_reader.lock().unwrap();
            written.push_str(&line);
            written.push('\n');
        }
    });
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .expect("the engine prints its URL");
    let served = Served {
        child,
        stderr: Some(stderr),
        written,
    };
    if !line.starts_with("http://127.0.0.1:") {
        panic!("not a URL: {line:?}; the engine said:\n{}", served.stop());
    }
    (served, line.trim().to_owned())
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
    let (served, server) = launch(engine, extra, transport, headers);
    run_client_beside(json!({ "server": server, "steps": steps }), served)
}

/// [`drive`], and everything the engine wrote to stderr: the served engine's over HTTP;
/// over stdio, the client's, which the engine it starts writes to.
pub fn drive_with_stderr(
    engine: &str,
    extra: &[&str],
    transport: Transport,
    steps: Value,
) -> (Value, String) {
    let (served, server) = launch(engine, extra, transport, json!({}));
    let plan = json!({ "server": server, "steps": steps });
    let output = client_output(&plan);
    if !output.status.success() {
        client_failed(&plan, &output, served);
    }
    let report = serde_json::from_slice(&output.stdout).expect("the client's JSON report");
    let stderr = match served {
        Some(served) => served.stop(),
        None => String::from_utf8_lossy(&output.stderr).into_owned(),
    };
    (report, stderr)
}

/// The server part of a plan: the command the client starts over stdio, or the URL of an
/// engine served here over HTTP (kept alive by the `Served` answered with it).
fn launch(
    engine: &str,
    extra: &[&str],
    transport: Transport,
    headers: Value,
) -> (Option<Served>, Value) {
    match transport {
        Transport::Stdio => {
            let mut command = vec![engine, "mcp"];
            command.extend_from_slice(extra);
            (None, json!({ "stdio": command }))
        }
        Transport::Http => {
            let (served, url) = serve(engine, extra);
            (Some(served), json!({ "url": url, "headers": headers }))
        }
    }
}

/// Runs client.py with `plan` (its server, its steps and options) and answers the report.
pub fn run_client(plan: Value) -> Value {
    run_client_beside(plan, None)
}

/// [`run_client`] against `served`, stopped afterwards: when the client fails, what the
/// engine wrote to stderr is shown with what the client did.
pub fn run_client_beside(plan: Value, served: Option<Served>) -> Value {
    let output = client_output(&plan);
    if !output.status.success() {
        client_failed(&plan, &output, served);
    }
    serde_json::from_slice(&output.stdout).expect("the client's JSON report")
}

fn client_output(plan: &Value) -> std::process::Output {
    run_script("client.py", plan)
}

/// Runs `tests/mcp/<script>` (the official Python MCP client at work) with `plan` as JSON
/// on its stdin, and answers what it wrote and how it ended.
pub fn run_script(script: &str, plan: &Value) -> std::process::Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../mcp")
        .join(script);
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
    client.wait_with_output().unwrap()
}

fn client_failed(plan: &Value, output: &std::process::Output, served: Option<Served>) -> ! {
    let engine_said = served.map(Served::stop).unwrap_or_default();
    panic!(
        "the client failed over {}:\n{}\nthe served engine's stderr:\n{engine_said}",
        plan["server"],
        String::from_utf8_lossy(&output.stderr)
    );
}
