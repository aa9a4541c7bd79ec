//! The example engine's MCP HTTP server, guarded: a bearer token (checked with the official
//! Python MCP client), start-up refusals (other hosts without a token, a weak token), and
//! `Origin`, `Host`, connection, in-flight and deadline limits (checked with raw HTTP).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};
use test_support::mcp::{run_client, serve_with_env, Served};
use test_support::provider::Provider;

const ENGINE: &str = env!("CARGO_BIN_EXE_engine");
const TOKEN: &str = "tok-7d1f\u{e9}\"quoted\"-4e8a9f310c6d5a7b";
const ASCII_TOKEN: &str = "tok-7d1f-2b9c-4e8a-9f31-0c6d5a7b8e2f";

/// Runs client.py against `url` with `headers`, reporting a refusal rather than failing.
fn client(url: &str, headers: Value) -> Value {
    run_client(json!({
        "server": { "url": url, "headers": headers },
        "steps": [{ "call": "weather__weather", "arguments": { "city": "Rome", "days": 1, "units": null } }],
        "may_be_refused": true,
    }))
}

/// The `host:port` of an `http://host:port/mcp` URL.
fn authority(url: &str) -> &str {
    url.strip_prefix("http://")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .expect("an http://host:port/mcp URL")
}

/// One raw HTTP/1.1 `tools/call` of `tool` to `url`, with `headers` (a `host` among them
/// replaces the URL's), as protocol 2026-07-28 has it (no session: the version and the
/// method in headers and `_meta`): the status and the body.
fn raw_call(url: &str, headers: &[(&str, &str)], tool: &str, arguments: Value) -> (u16, String) {
    let authority = authority(url);
    let host = headers
        .iter()
        .find(|(name, _)| *name == "host")
        .map_or(authority, |(_, host)| host);
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {
            "name": tool,
            "arguments": arguments,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    })
    .to_string();
    let mut stream = TcpStream::connect(authority).expect("the server listens");
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nhost: {host}\r\naccept: application/json, text/event-stream\r\n\
         content-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\
         mcp-protocol-version: 2026-07-28\r\nmcp-method: tools/call\r\nmcp-name: {tool}\r\n",
        body.len()
    );
    for (name, value) in headers.iter().filter(|(name, _)| *name != "host") {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(&body);
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    BufReader::new(stream)
        .read_to_string(&mut response)
        .unwrap();
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|status| status.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP response: {response:?}"));
    let body = response.split_once("\r\n\r\n").map_or("", |(_, body)| body);
    (status, body.to_owned())
}

fn weather(url: &str, headers: &[(&str, &str)]) -> (u16, String) {
    raw_call(
        url,
        headers,
        "weather__weather",
        json!({ "city": "Rome", "days": 1, "units": null }),
    )
}

fn serve(extra: &[&str], token: Option<&str>) -> (Served, String) {
    let env: Vec<(&str, &str)> = token
        .map(|token| ("ENGINE_MCP_TOKEN", token))
        .into_iter()
        .collect();
    serve_with_env(ENGINE, extra, &env)
}

#[test]
fn with_a_token_the_python_client_needs_it_and_a_missing_or_wrong_one_gets_401() {
    let (_served, url) = serve(&[], Some(ASCII_TOKEN));
    let admitted = client(
        &url,
        json!({ "Authorization": format!("Bearer {ASCII_TOKEN}") }),
    );
    assert_eq!(admitted["steps"][0]["isError"], false, "{admitted}");
    for headers in [
        json!({}),
        json!({ "Authorization": format!("Bearer {}", &ASCII_TOKEN[..ASCII_TOKEN.len() - 1]) }),
        json!({ "Authorization": format!("Bearer {ASCII_TOKEN}x") }),
        json!({ "Authorization": format!("Basic {ASCII_TOKEN}") }),
    ] {
        let refused = client(&url, headers.clone());
        let statuses = &refused["refused"]["http_statuses"];
        assert!(
            statuses.as_array().is_some_and(
                |statuses| !statuses.is_empty() && statuses.iter().all(|status| status == 401)
            ),
            "{headers}: {refused}"
        );
    }
}

#[test]
fn a_token_that_is_not_ascii_is_compared_whole() {
    // The header carries the token's UTF-8 bytes; raw HTTP sends them as they are.
    let (_served, url) = serve(&[], Some(TOKEN));
    let bearer = format!("Bearer {TOKEN}");
    assert_eq!(weather(&url, &[("authorization", &bearer)]).0, 200);
    let shorter = format!("Bearer {}", &TOKEN[..TOKEN.len() - 1]);
    assert_eq!(weather(&url, &[("authorization", &shorter)]).0, 401);
    // The same length, one non-ASCII character different.
    let other = format!("Bearer {}", TOKEN.replace('\u{e9}', "\u{e8}"));
    assert_eq!(weather(&url, &[("authorization", &other)]).0, 401);
}

/// Starts `engine serve` with `args` and `token` and expects it to refuse: its stderr.
fn refused_at_startup(args: &[&str], token: Option<&str>) -> String {
    let mut command = Command::new(ENGINE);
    command
        .arg("serve")
        .args(args)
        .env_remove("ENGINE_MCP_TOKEN");
    if let Some(token) = token {
        command.env("ENGINE_MCP_TOKEN", token);
    }
    let mut refused = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the engine runs");
    // A server that started would announce its URL and run on: fail, never wait for it.
    let mut announced = String::new();
    BufReader::new(refused.stdout.take().unwrap())
        .read_line(&mut announced)
        .unwrap();
    if !announced.is_empty() {
        let _ = refused.kill();
        let _ = refused.wait();
        panic!("it served with {args:?}: {announced}");
    }
    let output = refused.wait_with_output().unwrap();
    assert!(!output.status.success());
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn serving_another_host_without_a_token_is_a_startup_error_that_names_the_fix() {
    let stderr = refused_at_startup(&["--addr", "0.0.0.0:0"], None);
    assert!(
        stderr.contains("refusing to serve MCP on 0.0.0.0:")
            && stderr.contains("Set ENGINE_MCP_TOKEN to a secret")
            && stderr.contains("or listen on a loopback address such as 127.0.0.1:"),
        "{stderr}"
    );

    // With a token it serves, and every request needs it.
    let mut child = Command::new(ENGINE)
        .args(["serve", "--addr", "0.0.0.0:0"])
        .env("ENGINE_MCP_TOKEN", ASCII_TOKEN)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the engine starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line
        .trim()
        .strip_prefix("http://0.0.0.0:")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .unwrap_or_else(|| panic!("not the URL: {line:?}"));
    let url = format!("http://127.0.0.1:{port}/mcp");
    let bearer = format!("Bearer {ASCII_TOKEN}");
    let with_token = weather(&url, &[("authorization", &bearer)]);
    let without = weather(&url, &[]);
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(with_token.0, 200, "{with_token:?}");
    assert_eq!(without.0, 401, "{without:?}");
}

#[test]
fn an_origin_that_is_not_loopback_or_allowed_gets_403() {
    // An origin that is not loopback exposes the server: it needs the token.
    let (_served, url) = serve(
        &["--allow-origin", "https://app.example.com:443"],
        Some(ASCII_TOKEN),
    );
    let bearer = format!("Bearer {ASCII_TOKEN}");
    for (origin, status) in [
        (None, 200),
        (Some("http://localhost:5173"), 200),
        (Some("http://127.0.0.1:8080"), 200),
        (Some("https://app.example.com"), 200),
        (Some("https://evil.example"), 403),
        (Some("https://app.example.com.evil.example"), 403),
        (Some("http://app.example.com"), 403),
        (Some("null"), 403),
    ] {
        let headers: Vec<(&str, &str)> = origin
            .map(|origin| ("origin", origin))
            .into_iter()
            .chain([("authorization", bearer.as_str())])
            .collect();
        let (got, body) = weather(&url, &headers);
        assert_eq!(got, status, "{origin:?}: {body}");
    }
}

#[test]
fn a_request_over_the_in_flight_limit_gets_503_at_once_and_the_next_one_is_served() {
    // A call that waits on a held model provider keeps the one place in flight.
    let provider = Provider::held();
    let dir = std::env::temp_dir().join(format!("engine-mcp-guard-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("engine.toml");
    std::fs::write(
        &config,
        format!(
            "[gateway]\nbase_url = {:?}\ntiers.fast = {{ model = \"m\", usd_per_million_input = 1.0, usd_per_million_output = 1.0 }}\n\
             [agents.default]\nmodel = {{ spend_cap_usd = 1.0 }}\n",
            provider.url()
        ),
    )
    .unwrap();
    let (_served, url) = serve(
        &["--config", config.to_str().unwrap(), "--max-in-flight", "1"],
        None,
    );
    let waiting = std::thread::spawn({
        let url = url.clone();
        move || {
            raw_call(
                &url,
                &[],
                "notes__summarize",
                json!({ "name": "n", "text": "A long note." }),
            )
        }
    });
    provider.wait_for_request();
    let asked = std::time::Instant::now();
    let (status, body) = weather(&url, &[]);
    assert_eq!(status, 503, "{body}");
    // At once: not after the held call's answer, which waits for the release below.
    assert!(
        asked.elapsed() < std::time::Duration::from_secs(2),
        "the 503 came after {:?}",
        asked.elapsed()
    );
    provider.release();
    let (status, body) = waiting.join().unwrap();
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("answer to A long note."), "{body}");
    assert_eq!(weather(&url, &[]).0, 200, "the place is free again");
}

#[test]
fn the_server_keeps_no_sessions_for_clients_to_pile_up() {
    let (_served, url) = serve(&[], None);
    let authority = url
        .strip_prefix("http://")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .unwrap();
    // An older client's `initialize`, which a server with sessions answers with one.
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": { "name": "raw", "version": "1" },
        },
    })
    .to_string();
    let mut stream = TcpStream::connect(authority).unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nhost: {authority}\r\naccept: application/json, text/event-stream\r\n\
         content-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    BufReader::new(stream)
        .read_to_string(&mut response)
        .unwrap();
    let (head, answer) = response.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{response}");
    assert!(answer.contains("\"serverInfo\""), "{response}");
    assert!(
        !head.to_ascii_lowercase().contains("mcp-session-id"),
        "a session was opened: {head}"
    );
}

#[test]
fn allowing_a_host_or_origin_that_is_not_loopback_needs_a_token() {
    for allowed in [
        ["--allow-host", "mcp.example.com"],
        ["--allow-origin", "https://app.example.com:443"],
    ] {
        let args = [&["--addr", "127.0.0.1:0"], &allowed[..]].concat();
        let stderr = refused_at_startup(&args, None);
        assert!(
            stderr.contains(&format!(
                "refusing to serve MCP for `{}` without a token",
                allowed[1]
            )) && stderr.contains("Set ENGINE_MCP_TOKEN to a secret"),
            "{allowed:?}: {stderr}"
        );
    }
    let stderr = refused_at_startup(&["--allow-origin", "app.example.com"], None);
    assert!(
        stderr.contains(
            "the allowed origin `app.example.com` does not parse: write it as `scheme://host:port`"
        ),
        "{stderr}"
    );
}

#[test]
fn a_short_token_or_one_with_whitespace_is_a_startup_error_that_says_how_to_make_one() {
    for (token, weakness) in [
        ("tok-7d1f-2b9c", "is shorter than 32 bytes"),
        (
            "tok-7d1f-2b9c-4e8a 9f31-0c6d5a7b8e2f",
            "contains whitespace or control characters",
        ),
    ] {
        let stderr = refused_at_startup(&["--addr", "127.0.0.1:0"], Some(token));
        assert!(
            stderr.contains(&format!("the MCP token {weakness}"))
                && stderr.contains("openssl rand -hex 32"),
            "{token:?}: {stderr}"
        );
    }
}

#[test]
fn a_host_header_that_is_not_loopback_or_allowed_gets_403() {
    let (_served, url) = serve(&[], None);
    let port = authority(&url).rsplit_once(':').unwrap().1;
    let localhost = format!("localhost:{port}");
    assert_eq!(weather(&url, &[("host", &localhost)]).0, 200);
    let (status, body) = weather(&url, &[("host", "mcp.example.com")]);
    assert_eq!(status, 403, "{body}");

    let (_served, url) = serve(&["--allow-host", "mcp.example.com"], Some(ASCII_TOKEN));
    let bearer = format!("Bearer {ASCII_TOKEN}");
    for (host, status) in [("mcp.example.com", 200), ("other.example.com", 403)] {
        let (got, body) = weather(&url, &[("host", host), ("authorization", &bearer)]);
        assert_eq!(got, status, "{host}: {body}");
    }
}

/// How long the deadline tests give the server beyond its deadline before calling it hung.
const GRACE: Duration = Duration::from_secs(5);

/// Connects to `url`'s server with a read timeout of `deadline` plus [`GRACE`].
fn connect(url: &str, deadline: Duration) -> TcpStream {
    let stream = TcpStream::connect(authority(url)).expect("the server listens");
    stream.set_read_timeout(Some(deadline + GRACE)).unwrap();
    stream
}

/// Reads until the server closes `stream` (a reset counts: a server that closes with
/// bytes unread resets): what it sent, or the error if it did not close it in time.
fn read_until_closed(stream: &mut TcpStream) -> std::io::Result<String> {
    let mut answer = Vec::new();
    let mut buffer = [0; 4096];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => answer.extend_from_slice(&buffer[..read]),
            Err(error) if error.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(error) => return Err(error),
        }
    }
    Ok(String::from_utf8_lossy(&answer).into_owned())
}

#[test]
fn idle_connections_are_closed_after_the_header_timeout_and_one_over_the_cap_gets_503() {
    let timeout = Duration::from_millis(500);
    let (_served, url) = serve(
        &["--max-connections", "2", "--header-read-timeout-ms", "500"],
        None,
    );
    // Two connections that start a request and stall hold every place.
    let mut stalled: Vec<TcpStream> = (0..2)
        .map(|_| {
            let mut stream = connect(&url, timeout);
            stream.write_all(b"POST /mcp HTT").unwrap();
            stream
        })
        .collect();
    let mut over = connect(&url, timeout);
    let refused = read_until_closed(&mut over).expect("the third connection is answered");
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
    for stream in &mut stalled {
        let closed = read_until_closed(stream);
        assert!(
            closed.is_ok(),
            "a stalled connection was kept open: {closed:?}"
        );
    }
    // Their places are free again.
    let (status, body) = weather(&url, &[]);
    assert_eq!(status, 200, "{body}");
}

#[test]
fn a_body_that_trickles_past_its_deadline_gets_408_and_gives_its_place_back() {
    let timeout = Duration::from_millis(500);
    let (_served, url) = serve(
        &["--max-in-flight", "1", "--body-read-timeout-ms", "500"],
        None,
    );
    let mut stream = connect(&url, timeout);
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nhost: {}\r\naccept: application/json, text/event-stream\r\n\
         content-type: application/json\r\ncontent-length: 1000\r\n\r\n",
        authority(&url)
    )
    .unwrap();
    // A byte every 100 ms, each well within any per-read timeout, for longer than the
    // deadline plus the grace: only a deadline on the whole body stops it.
    let mut trickle = stream.try_clone().unwrap();
    let trickler = std::thread::spawn(move || {
        for _ in 0..60 {
            if trickle.write_all(b" ").is_err() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    });
    let answer = read_until_closed(&mut stream).expect("the slow request is answered");
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    let (status, body) = weather(&url, &[]);
    assert_eq!(status, 200, "the place in flight is free again: {body}");
    drop(stream);
    trickler.join().unwrap();
}
