//! `llmock`, a third-party mock of the OpenAI and Anthropic APIs (pinned in the test venv):
//! started on a free loopback port for one test, scripted over its admin API, and read
//! back through its journal of the requests it received.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// A running llmock, stopped when dropped.
pub struct Llmock {
    child: Child,
    port: u16,
}

impl Llmock {
    /// Starts llmock from the test venv on a free port, without its own tool calls (every
    /// reply is scripted), and waits until it answers. The port is free when chosen, and
    /// may be taken before llmock binds it (tests run in parallel): then llmock exits, and
    /// another port is tried.
    pub fn start() -> Self {
        Self::start_in("off")
    }

    /// [`start`](Self::start), with llmock's own tool calls: a request that offers tools
    /// and holds no tool result yet is answered with a call of the tool that best matches
    /// the prompt (arguments made from its schema), one that ends with a tool result with
    /// text. Stateless, so replicas may send it requests in any order.
    pub fn start_auto() -> Self {
        Self::start_in("auto")
    }

    fn start_in(tool_mode: &str) -> Self {
        let python = crate::python("the agent-turn tests run against llmock");
        let llmock = python.with_file_name("llmock");
        for _ in 0..3 {
            let port = TcpListener::bind("127.0.0.1:0")
                .and_then(|listener| listener.local_addr())
                .expect("a free port")
                .port();
            let child = Command::new(&llmock)
                .args(["serve", "--host", "127.0.0.1", "--port", &port.to_string()])
                .args(["--tool-mode", tool_mode, "--log-level", "warning"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap_or_else(|error| panic!("{} starts: {error}", llmock.display()));
            let mut server = Self { child, port };
            let started = Instant::now();
            loop {
                if server.healthy() {
                    return server;
                }
                if server.child.try_wait().ok().flatten().is_some() {
                    break; // it could not bind: try another port
                }
                assert!(
                    started.elapsed() < Duration::from_secs(60),
                    "llmock did not start"
                );
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        panic!("llmock exited three times at start: are its ports taken?")
    }

    /// Whether llmock itself answers its health check (not some other server).
    fn healthy(&self) -> bool {
        self.request("GET", "/health", "").is_some_and(|answer| {
            answer.starts_with("HTTP/1.1 200") && answer.contains("\"status\":\"ok\"")
        })
    }

    /// The OpenAI-compatible base URL (`.../v1`).
    pub fn openai_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// The Anthropic base URL (`/v1/messages` goes after it).
    pub fn anthropic_url(&self) -> String {
        format!("http://127.0.0.1:{}/anthropic", self.port)
    }

    /// Queues `behaviors` (llmock's scenario format), answered in order.
    pub fn script(&self, behaviors: Value) {
        let body = serde_json::json!({ "behaviors": behaviors }).to_string();
        let answer = self
            .request("POST", "/_llmock/scenario", &body)
            .expect("llmock answers");
        assert!(
            answer.starts_with("HTTP/1.1 201"),
            "llmock refused the script: {answer}"
        );
    }

    /// Every request llmock received, oldest first: `path`, `status`, `fault`, `body`.
    pub fn journal(&self) -> Vec<Value> {
        let body = self.get("/_llmock/requests").expect("llmock answers");
        let journal: Value = serde_json::from_str(&body).expect("the journal is JSON");
        journal["requests"].as_array().cloned().unwrap_or_default()
    }

    /// The scripted behaviours no request has used yet: empty once a request under way
    /// took the last of them (the journal holds a request only once it is served).
    pub fn pending(&self) -> Vec<Value> {
        let body = self.get("/_llmock/scenario").expect("llmock answers");
        let scenario: Value = serde_json::from_str(&body).expect("the scenario is JSON");
        scenario["pending"].as_array().cloned().unwrap_or_default()
    }

    fn get(&self, path: &str) -> Option<String> {
        let answer = self.request("GET", path, "")?;
        answer
            .split_once("\r\n\r\n")
            .map(|(_, body)| body.to_owned())
    }

    /// One HTTP/1.1 exchange, closed after (llmock answers with a length).
    fn request(&self, method: &str, path: &str, body: &str) -> Option<String> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .ok()?;
        let request = format!(
            "{method} {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).ok()?;
        let mut answer = String::new();
        stream.read_to_string(&mut answer).ok()?;
        Some(answer)
    }
}

impl Drop for Llmock {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
