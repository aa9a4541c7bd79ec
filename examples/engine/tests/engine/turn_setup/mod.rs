//! What the tests of turns share: a scratch directory and configuration with one agent
//! `bot` on llmock, the engine run as a process (`engine turn`, `engine serve`), and
//! readers of its events.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::Duration;

use serde_json::Value;
use test_support::llmock::Llmock;

/// A data directory and configuration for one test, with one agent `bot` on llmock.
pub struct Setup {
    pub dir: PathBuf,
}

impl Setup {
    /// `wire` is `openai` or `anthropic`; `turn` and `provider` are extra TOML lines for
    /// the agent's turn and the provider.
    pub fn new(name: &str, mock: &Llmock, wire: &str, provider: &str, turn: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("engine-turns-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        let url = match wire {
            "openai" => mock.openai_url(),
            _ => mock.anthropic_url(),
        };
        let config = format!(
            "data_dir = {data:?}\n\
             [providers.mock]\nwire = {wire:?}\nbase_url = {url:?}\nmodel = {model:?}\n\
             usd_per_million_input = 1.0\nusd_per_million_output = 2.0\n{provider}\n\
             [agents.bot.turn]\nprovider = \"mock\"\n{turn}\n",
            data = dir.join("data"),
            model = mock.model(),
        );
        std::fs::write(dir.join("engine.toml"), config).expect("the configuration is written");
        Self { dir }
    }

    pub fn config(&self) -> PathBuf {
        self.dir.join("engine.toml")
    }

    /// Runs `engine turn` with `args` and answers its events and how it exited.
    pub fn turn(&self, args: &[&str]) -> (Vec<Value>, Output) {
        let output = Command::new(env!("CARGO_BIN_EXE_engine"))
            .arg("--config")
            .arg(self.config())
            .args(["--agent", "bot", "turn"])
            .args(args)
            .output()
            .expect("the engine runs");
        let events = String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(|line| serde_json::from_str(line).expect("each line is JSON"))
            .collect();
        (events, output)
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Starts `engine serve` for `setup`'s agent `bot`, with `token` if one is given;
/// answers the server and its authority (`127.0.0.1:PORT`).
pub fn serve(setup: &Setup, token: Option<&str>) -> (test_support::mcp::Served, String) {
    serve_config(&setup.config(), token)
}

/// [`serve`], with the configuration at `config`.
pub fn serve_config(
    config: &std::path::Path,
    token: Option<&str>,
) -> (test_support::mcp::Served, String) {
    serve_with(config, token, &[])
}

/// [`serve_config`], with `extra` arguments for `engine serve`.
pub fn serve_with(
    config: &std::path::Path,
    token: Option<&str>,
    extra: &[&str],
) -> (test_support::mcp::Served, String) {
    let env: Vec<(&str, &str)> = token
        .map(|token| ("ENGINE_MCP_TOKEN", token))
        .into_iter()
        .collect();
    let mut args = vec!["--config", config.to_str().unwrap(), "--agent", "bot"];
    args.extend_from_slice(extra);
    let (served, url) =
        test_support::mcp::serve_with_env(env!("CARGO_BIN_EXE_engine"), &args, &env);
    let authority = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    (served, authority)
}

/// Sends one HTTP/1.1 request (closed after its answer); answers the connection to read.
pub fn send(
    authority: &str,
    method: &str,
    path: &str,
    body: &str,
    token: Option<&str>,
) -> std::net::TcpStream {
    use std::io::Write;
    let mut client = std::net::TcpStream::connect(authority).unwrap();
    client
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let auth = token
        .map(|token| format!("authorization: Bearer {token}\r\n"))
        .unwrap_or_default();
    write!(
        client,
        "{method} {path} HTTP/1.1\r\nhost: {authority}\r\n{auth}content-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    client
}

pub fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|event| event["type"] == kind)
        .collect()
}

pub fn done(events: &[Value]) -> &Value {
    let last = events.last().expect("events");
    assert_eq!(last["type"], "done", "the last event is done: {events:#?}");
    last
}

/// The content of the first tool answer in the last request `mock` received.
pub fn last_tool_answer(mock: &Llmock) -> String {
    let journal = mock.journal();
    journal.last().expect("a request")["body"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|message| message["role"] == "tool")
        .expect("a tool's answer")["content"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Waits until a model request took every behaviour scripted so far: llmock's journal
/// holds a request only once it is served, its pending list shows one under way.
pub fn wait_until_asked(mock: &Llmock) {
    let asked = std::time::Instant::now();
    while !mock.pending().is_empty() {
        assert!(
            asked.elapsed() < Duration::from_secs(20),
            "the engine never asked its model"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Reads one HTTP/1.1 request from `stream`: its header lines (without their line
/// ends) and its body, as far as `content-length` says.
pub fn read_request(stream: &std::net::TcpStream) -> (Vec<String>, Vec<u8>) {
    use std::io::{BufRead, Read};
    let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
    let mut headers = Vec::new();
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = value.trim().parse().unwrap_or(0);
        }
        headers.push(line.trim_end().to_owned());
    }
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    (headers, body)
}

/// `engine chat` for `setup`'s agent `bot`, with `extra` arguments, fed `input`: what it
/// printed, once it exited successfully.
pub fn chat(setup: &Setup, extra: &[&str], input: &str) -> String {
    use std::io::Write;
    use std::process::Stdio;

    let mut chat = Command::new(env!("CARGO_BIN_EXE_engine"))
        .arg("--config")
        .arg(setup.config())
        .args(["--agent", "bot", "chat"])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    chat.stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let output = chat.wait_with_output().unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}
