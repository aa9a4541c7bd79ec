//! `llmock`, a third-party mock of the OpenAI and Anthropic APIs (pinned in the test venv),
//! scripted over its admin API and read back through its journal of the requests it
//! received.
//!
//! One llmock serves every test of a run (`scripts/test` starts it and names it in
//! `PLUGIN_SDK_LLMOCK_URL`); each test has models of its own on it, and what it scripts
//! answers only requests for them, what it reads of the journal is only theirs. Without
//! the variable, a test starts an llmock of its own.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The variable that names the run's shared llmock (`http://127.0.0.1:PORT`).
const SHARED: &str = "PLUGIN_SDK_LLMOCK_URL";

/// One test's llmock: the run's, or its own (stopped when dropped), and the name its
/// models start with.
pub struct Llmock {
    own: Option<Child>,
    port: u16,
    scope: String,
}

impl Llmock {
    /// The run's llmock, or one started from the test venv on a free port, without
    /// llmock's own tool calls (every reply is scripted).
    pub fn start() -> Self {
        let port = match std::env::var(SHARED) {
            Ok(url) => url
                .rsplit_once(':')
                .and_then(|(_, port)| port.trim_end_matches('/').parse().ok())
                .unwrap_or_else(|| panic!("{SHARED} is not http://127.0.0.1:PORT: {url}")),
            Err(_) => return Self::start_own("off"),
        };
        Self {
            own: None,
            port,
            scope: scope(),
        }
    }

    /// An llmock of the test's own, with llmock's own tool calls: a request that offers
    /// tools and holds no tool result yet is answered with a call of the tool that best
    /// matches the prompt (arguments made from its schema), one that ends with a tool
    /// result with text. Stateless, so replicas may send it requests in any order.
    pub fn start_auto() -> Self {
        Self::start_own("auto")
    }

    /// Starts llmock on a free port and waits until it answers. The port is free when
    /// chosen, and may be taken before llmock binds it (tests run in parallel): then
    /// llmock exits, and another port is tried.
    fn start_own(tool_mode: &str) -> Self {
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
            let mut server = Self {
                own: Some(child),
                port,
                scope: scope(),
            };
            let started = Instant::now();
            loop {
                if server.healthy() {
                    return server;
                }
                let child = server.own.as_mut().expect("started here");
                if child.try_wait().ok().flatten().is_some() {
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

    /// The model a test's provider names: what it scripts answers it.
    pub fn model(&self) -> String {
        self.other_model("model")
    }

    /// Another model of the test's, for a second provider.
    pub fn other_model(&self, name: &str) -> String {
        format!("{}.{name}", self.scope)
    }

    /// Queues `behaviors` (llmock's scenario format), answered in order, each for the
    /// test's models only.
    pub fn script(&self, behaviors: Value) {
        let mut behaviors = behaviors;
        for behavior in behaviors.as_array_mut().expect("a list of behaviours") {
            // A `match` given replaces llmock's default for the kind, which is kept.
            let kind = behavior["type"].as_str().unwrap_or_default().to_owned();
            let matching = &mut behavior["match"];
            matching["model"] = Value::String(format!("{}.*", self.scope));
            match kind.as_str() {
                "stream_fault" | "slow_first_token" if matching.get("stream").is_none() => {
                    matching["stream"] = Value::Bool(true)
                }
                "tool_fault" if matching.get("tools").is_none() => {
                    matching["tools"] = Value::Bool(true)
                }
                _ => {}
            }
        }
        let body = serde_json::json!({ "behaviors": behaviors }).to_string();
        let answer = self
            .request("POST", "/_llmock/scenario", &body)
            .expect("llmock answers");
        assert!(
            answer.starts_with("HTTP/1.1 201"),
            "llmock refused the script: {answer}"
        );
    }

    /// Every request for the test's models llmock received, oldest first: `path`,
    /// `status`, `fault`, `model`, `body`.
    pub fn journal(&self) -> Vec<Value> {
        let body = self.get("/_llmock/requests").expect("llmock answers");
        let journal: Value = serde_json::from_str(&body).expect("the journal is JSON");
        let prefix = format!("{}.", self.scope);
        journal["requests"]
            .as_array()
            .into_iter()
            .flatten()
            // The model llmock matched on (a large request's `body` is not kept).
            .filter(|request| {
                request["model"]
                    .as_str()
                    .is_some_and(|model| model.starts_with(&prefix))
            })
            .cloned()
            .collect()
    }

    /// The test's scripted behaviours no request has used yet: empty once a request under
    /// way took the last of them (the journal holds a request only once it is served).
    pub fn pending(&self) -> Vec<Value> {
        let body = self.get("/_llmock/scenario").expect("llmock answers");
        let scenario: Value = serde_json::from_str(&body).expect("the scenario is JSON");
        let mine = format!("{}.*", self.scope);
        scenario["pending"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|behavior| behavior["match"]["model"] == mine.as_str())
            .cloned()
            .collect()
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

/// A name no other test of the run uses: `mock.<process>.<n>.<clock>`, the clock's
/// nanoseconds telling apart two processes the system gave one id (a run starts
/// thousands). Its models are `<scope>.<name>`, which llmock's pattern `<scope>.*`
/// matches and no other scope's does.
fn scope() -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let clock = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos());
    format!(
        "mock.{}.{}.{clock}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

impl Drop for Llmock {
    fn drop(&mut self) {
        if let Some(child) = &mut self.own {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
