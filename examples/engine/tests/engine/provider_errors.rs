//! What a provider says when it refuses a request reaches the client and the store, with
//! the engine's secrets redacted from it: many OpenAI-compatible gateways quote the key
//! they were sent in a 401.

use std::io::Write;
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;

use crate::turn_setup::read_request;
use serde_json::Value;

/// The agent's API key, as long as a project key: what the gateway below echoes.
const KEY: &str = "sk-proj-4242-Yq3vTg8LmN2pWx7RsK4dHc9BfJ6uZa1EoQ5iVy0tMnXb3GkLw8PrSe2DhUj7FcAz4NqTm6WvKy9RbLe1Xs5HgPd3JoCi8UfMa2ZtQn7VwBy4KrLx6SeHd0GjPu9NcTq3AmYf5RkWz1EvLb8DsXo2";

/// The start of the key: what a cut made before redacting would have left.
fn start_of_key() -> &'static str {
    &KEY[..24]
}

/// A gateway that answers every request 401, quoting the `Authorization` header it got,
/// as such gateways do; answers its base URL.
fn echoing_gateway() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let (headers, _) = read_request(&stream);
            let authorization = headers
                .iter()
                .find(|line| line.to_ascii_lowercase().starts_with("authorization:"))
                .map(|line| line["authorization:".len()..].trim().to_owned())
                .unwrap_or_default();
            let answer = serde_json::json!({
                "error": {
                    // As a gateway that dumps what it got: the key starts before the 300th
                    // character, where the body used to be cut before it was redacted.
                    "message": format!(
                        "{}: Incorrect API key provided: {authorization}",
                        "request rejected".repeat(13)
                    ),
                    "type": "invalid_request_error",
                }
            })
            .to_string();
            let _ = write!(
                stream,
                "HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\n\
                 content-length: {}\r\nconnection: close\r\n\r\n{answer}",
                answer.len()
            );
        }
    });
    url
}

/// Every byte of every file under `dir`.
fn every_file(dir: &Path) -> Vec<u8> {
    let mut bytes = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            bytes.extend(every_file(&path));
        } else {
            bytes.extend(std::fs::read(&path).unwrap());
        }
    }
    bytes
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle.as_bytes())
}

#[test]
fn a_401_that_quotes_the_key_reaches_the_stream_and_the_store_redacted() {
    let dir = std::env::temp_dir().join(format!("engine-provider-401-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let config = format!(
        "data_dir = {data:?}\n\
         [providers.gateway]\nwire = \"openai\"\nbase_url = {url:?}\nmodel = \"m\"\n\
         api_key_secret = \"openai_key\"\n\
         [agents.bot.turn]\nprovider = \"gateway\"\n",
        data = dir.join("data"),
        url = echoing_gateway(),
    );
    std::fs::write(dir.join("engine.toml"), config).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_engine"))
        .arg("--config")
        .arg(dir.join("engine.toml"))
        .args([
            "--agent",
            "bot",
            "turn",
            "--conversation",
            "c-401",
            "Hello?",
        ])
        .env("ENGINE_SECRET__bot__openai_key", KEY)
        .env("RUST_LOG", "debug")
        .output()
        .expect("the engine runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let events: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).expect("each line is JSON"))
        .collect();
    // The error still says what happened, and the turn's end says it too.
    let error = events
        .iter()
        .find(|event| event["type"] == "error")
        .unwrap_or_else(|| panic!("an error event: {stdout}"));
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("401") && message.contains("Incorrect API key provided"),
        "{message}"
    );
    let done = events.last().unwrap();
    assert_eq!(done["type"], "done", "{stdout}");
    assert_eq!(done["stop"]["reason"], "provider_error", "{done}");
    // Nowhere the process wrote, not even in part: its stream, its log, its data
    // directory.
    assert!(
        !contains(&output.stdout, start_of_key()),
        "the stream quotes the key: {stdout}"
    );
    assert!(
        !contains(&output.stderr, start_of_key()),
        "the log quotes the key: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stored = every_file(&dir.join("data"));
    assert!(!stored.is_empty(), "the turn stored nothing");
    assert!(
        !contains(&stored, start_of_key()),
        "the data directory holds the key"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A server that counts the connections it gets; answers its address.
fn counting_server() -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = std::sync::Arc::clone(&count);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(_stream) = stream else { return };
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    });
    (address, count)
}

/// A provider that answers every request `307`, to `location`; answers its base URL.
fn redirecting_provider(location: String) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            read_request(&stream);
            let _ = write!(
                stream,
                "HTTP/1.1 307 Temporary Redirect\r\nlocation: {location}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            );
        }
    });
    url
}

/// A provider's redirect is not followed: reqwest would drop `Authorization` on the way
/// to another host, but not Anthropic's `x-api-key`, and a 307 would send the
/// conversation along. The turn fails instead, and the other host hears nothing.
#[test]
fn a_provider_that_redirects_is_an_error_and_the_key_goes_nowhere_else() {
    let dir = std::env::temp_dir().join(format!("engine-provider-307-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (elsewhere, heard) = counting_server();
    let url = redirecting_provider(format!("http://{elsewhere}/v1/messages"));
    let config = format!(
        "data_dir = {data:?}\n\
         [providers.gateway]\nwire = \"anthropic\"\nbase_url = {url:?}\nmodel = \"m\"\n\
         api_key_secret = \"anthropic_key\"\nmax_retries = 0\n\
         [agents.bot.turn]\nprovider = \"gateway\"\n",
        data = dir.join("data"),
    );
    std::fs::write(dir.join("engine.toml"), config).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_engine"))
        .arg("--config")
        .arg(dir.join("engine.toml"))
        .args(["--agent", "bot", "turn", "Hello?"])
        .env("ENGINE_SECRET__bot__anthropic_key", KEY)
        .output()
        .expect("the engine runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let done: Value = serde_json::from_str(stdout.lines().last().expect("events")).unwrap();
    assert_eq!(done["stop"]["reason"], "provider_error", "{stdout}");
    assert!(
        done["stop"]["message"].as_str().unwrap().contains("307"),
        "{done}"
    );
    // A followed redirect's connection may be accepted after the engine exited: give
    // the counting thread a moment before reading it.
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(
        heard.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "the redirect was followed"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
