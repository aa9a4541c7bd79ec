//! OAuth for tools against a real authorization server (Authlib, started here): a user
//! connects through the link a tool hands back, in a browser's steps over HTTP; the
//! example `calendar:whoami` then asks the provider's API with the token; refresh after
//! expiry, a revoked grant, a wrong `state`, a replayed code, another browser, another
//! subscriber; and no token in what the engine prints or keeps.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

/// The key tokens are sealed with, for these tests only.
const KEY: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

/// The authorization server, stopped when dropped.
struct Provider {
    child: Child,
    base: String,
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Provider {
    fn start(redirect_uri: &str) -> Self {
        let python = std::env::var("PLUGIN_SDK_PYTHON").expect(
            "PLUGIN_SDK_PYTHON is not set: run `bash scripts/test`, which makes the venv with Authlib",
        );
        let script =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oauth/authorization_server.py");
        let mut child = Command::new(python)
            .arg(script)
            .arg(redirect_uri)
            .stdout(Stdio::piped())
            .spawn()
            .expect("the authorization server starts");
        let mut base = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut base)
            .unwrap();
        assert!(base.starts_with("http://127.0.0.1:"), "{base:?}");
        Self {
            child,
            base: base.trim().to_owned(),
        }
    }

    /// An admin request of the server (`/admin/...`), answered as JSON.
    fn admin(&self, method: &str, path: &str) -> Value {
        let (status, _, body) = request(method, &format!("{}{path}", self.base), None);
        assert_eq!(status, 200, "{body}");
        serde_json::from_str(&body).unwrap()
    }

    fn tokens(&self) -> Vec<String> {
        self.admin("GET", "/admin/tokens")["tokens"]
            .as_array()
            .unwrap()
            .iter()
            .map(|token| token.as_str().unwrap().to_owned())
            .collect()
    }
}

/// One HTTP/1.1 request to `url` with the `cookie` header (`name=value`) if given: its
/// status, its headers (names in lower case) and its body.
fn request(method: &str, url: &str, cookie: Option<&str>) -> (u16, Vec<(String, String)>, String) {
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let path = if path.is_empty() { "/" } else { path };
    let mut stream = TcpStream::connect(authority).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let cookie = cookie
        .map(|value| format!("cookie: {value}\r\n"))
        .unwrap_or_default();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nhost: {authority}\r\n{cookie}content-length: 0\r\nconnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    (status, headers, body.to_owned())
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> &'a str {
    headers
        .iter()
        .find(|(held, _)| held == name)
        .map(|(_, value)| value.as_str())
        .unwrap_or_else(|| panic!("no {name} in {headers:?}"))
}

/// A port nothing listens on now, for the engine, whose URL its configuration names.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A directory, the configuration and the environment of an engine whose agent
/// `assistant` has a client for `calendar:acme` at `provider`.
struct Setup {
    dir: PathBuf,
    port: u16,
    /// Everything the `engine call` processes printed.
    printed: std::sync::Mutex<String>,
}

impl Drop for Setup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Setup {
    fn new(name: &str, port: u16, provider: &Provider) -> Self {
        let dir = std::env::temp_dir().join(format!("engine-oauth-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let base = &provider.base;
        let config = format!(
            "data_dir = {data:?}\n\
             [oauth]\npublic_url = \"http://127.0.0.1:{port}\"\n\
             [agents.assistant]\ntools = [\"calendar:whoami\"]\n\
             [agents.assistant.oauth.\"calendar:acme\"]\nclient_id = \"engine\"\nclient_secret = \"acme_client_secret\"\n\
             authorize_url = \"{base}/oauth/authorize\"\ntoken_url = \"{base}/oauth/token\"\n\
             [agents.assistant.plugins.calendar]\napi_url = \"{base}\"\n",
            data = dir.join("data").display().to_string(),
        );
        std::fs::write(dir.join("engine.toml"), config).unwrap();
        Self {
            dir,
            port,
            printed: std::sync::Mutex::default(),
        }
    }

    fn env(&self) -> [(&'static str, &'static str); 2] {
        [
            ("ENGINE_OAUTH_KEY", KEY),
            (
                "ENGINE_SECRET__assistant__acme_client_secret",
                "engine-secret",
            ),
        ]
    }

    fn serve(&self) -> test_support::mcp::Served {
        let config = self.dir.join("engine.toml");
        let (served, _) = test_support::mcp::serve_at(
            env!("CARGO_BIN_EXE_engine"),
            &format!("127.0.0.1:{}", self.port),
            &["--config", config.to_str().unwrap(), "--agent", "assistant"],
            &self.env(),
        );
        served
    }

    /// `calendar:whoami` for `subscriber`, as `engine call` runs it: whether it
    /// succeeded, and what it printed (stdout, then stderr).
    fn whoami(&self, subscriber: &str) -> (bool, String, String) {
        let answer = self.whoami_once(subscriber);
        let mut printed = self.printed.lock().unwrap();
        printed.push_str(&answer.1);
        printed.push_str(&answer.2);
        answer
    }

    fn whoami_once(&self, subscriber: &str) -> (bool, String, String) {
        let output = Command::new(env!("CARGO_BIN_EXE_engine"))
            .arg("--config")
            .arg(self.dir.join("engine.toml"))
            .args(["--agent", "assistant", "call", "--subscriber", subscriber])
            .args([
                "--conversation",
                &format!("c-{subscriber}"),
                "calendar__whoami",
                "{}",
            ])
            .envs(self.env())
            .output()
            .unwrap();
        (
            output.status.success(),
            String::from_utf8(output.stdout).unwrap(),
            String::from_utf8(output.stderr).unwrap(),
        )
    }

    fn connect_link(&self, subscriber: &str) -> String {
        let (succeeded, out, err) = self.whoami(subscriber);
        assert!(!succeeded, "{out}{err}");
        let at = out
            .find(&format!("http://127.0.0.1:{}/oauth/connect/", self.port))
            .unwrap_or_else(|| panic!("no connect link in {out}"));
        out[at..]
            .split(|c: char| c.is_whitespace() || c == '"')
            .next()
            .unwrap()
            .to_owned()
    }
}

/// A browser's steps from a connect link: the engine sends it to the provider (with a
/// cookie), the provider back to the callback (consenting at once). Answers the cookie
/// (`name=value`) and the callback's URL, not yet followed.
fn to_callback(link: &str) -> (String, String) {
    let (status, headers, body) = request("GET", link, None);
    assert_eq!(status, 302, "{body}");
    let cookie = header(&headers, "set-cookie");
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax"),
        "{cookie}"
    );
    assert!(
        cookie.contains("Path=/oauth") && cookie.contains("Max-Age=600"),
        "{cookie}"
    );
    let pair = cookie.split(';').next().unwrap().to_owned();
    let (name, state) = pair.split_once('=').unwrap();
    assert_eq!(
        name,
        format!("engine_oauth_{state}"),
        "a cookie per sign-in"
    );
    let authorize = header(&headers, "location").to_owned();
    assert!(
        authorize.contains("code_challenge_method=S256"),
        "{authorize}"
    );
    assert!(authorize.contains(&format!("state={state}")), "{authorize}");
    let (status, headers, body) = request("GET", &authorize, None);
    assert_eq!(status, 302, "{body}");
    (pair, header(&headers, "location").to_owned())
}

/// Connects `subscriber` through a whole sign-in.
fn connect(setup: &Setup, subscriber: &str) {
    let (cookie, callback) = to_callback(&setup.connect_link(subscriber));
    let (status, _, body) = request("GET", &callback, Some(&cookie));
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("Connected `calendar:acme`"), "{body}");
}

/// The names and the bytes of every file under `dir`.
fn files_under(dir: &Path) -> (Vec<String>, Vec<u8>) {
    let (mut names, mut bytes) = (Vec::new(), Vec::new());
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            let (more, held) = files_under(&path);
            names.extend(more);
            bytes.extend(held);
        } else {
            names.push(path.file_name().unwrap().to_string_lossy().into_owned());
            bytes.extend(std::fs::read(&path).unwrap());
        }
    }
    (names, bytes)
}

#[test]
fn a_user_connects_through_the_link_and_the_tool_asks_the_api_with_their_token() {
    let port = free_port();
    let provider = Provider::start(&format!("http://127.0.0.1:{port}/oauth/callback"));
    let setup = Setup::new("connect", port, &provider);
    let served = setup.serve();
    // Not connected: the tool's answer holds the link, for the model to hand on.
    let (succeeded, out, _) = setup.whoami("ada");
    assert!(!succeeded);
    assert!(out.contains("the user has not connected `calendar:acme`: ask them to connect it at http://127.0.0.1:"), "{out}");
    connect(&setup, "ada");
    let (succeeded, out, err) = setup.whoami("ada");
    assert!(succeeded, "{out}{err}");
    assert_eq!(out.trim(), "\"alice\"");
    // Another subscriber gets no one's token: a link of their own.
    provider.admin("POST", "/admin/user?name=bob");
    connect(&setup, "eve");
    assert_eq!(setup.whoami("eve").1.trim(), "\"bob\"");
    assert_eq!(
        setup.whoami("ada").1.trim(),
        "\"alice\"",
        "ada's grant is hers"
    );
    // No token in what the engine printed, nor in its files (sealed at rest).
    let tokens = provider.tokens();
    assert!(tokens.len() >= 4, "{tokens:?}");
    let printed = served.stop() + &setup.printed.lock().unwrap();
    let (names, kept) = files_under(&setup.dir.join("data"));
    assert!(names.iter().any(|name| name == "oauth.sqlite"), "{names:?}");
    for token in &tokens {
        assert!(
            !printed.contains(token.as_str()),
            "a token in what the engine printed"
        );
        assert!(
            !kept
                .windows(token.len())
                .any(|window| window == token.as_bytes()),
            "a token in the data directory, unsealed"
        );
    }
}

#[test]
fn an_expired_token_is_refreshed_and_a_revoked_grant_asks_to_connect_again() {
    let port = free_port();
    let provider = Provider::start(&format!("http://127.0.0.1:{port}/oauth/callback"));
    let setup = Setup::new("refresh", port, &provider);
    let _served = setup.serve();
    // Issued expiring at once: each call finds its token expired, and refreshes with
    // the refresh token the last refresh rotated in (Authlib refuses a spent one).
    provider.admin("POST", "/admin/expires_in?secs=1");
    connect(&setup, "ada");
    assert_eq!(provider.admin("GET", "/admin/stats")["refreshes"], 0);
    for refreshes in [1, 2] {
        let (succeeded, out, err) = setup.whoami("ada");
        assert!(succeeded, "{out}{err}");
        assert_eq!(out.trim(), "\"alice\"");
        assert_eq!(
            provider.admin("GET", "/admin/stats")["refreshes"],
            refreshes
        );
    }
    provider.admin("POST", "/admin/expires_in?secs=3600");
    assert_eq!(setup.whoami("ada").1.trim(), "\"alice\"");
    assert_eq!(provider.admin("GET", "/admin/stats")["refreshes"], 3);
    // The next call takes the refreshed token as it is.
    assert_eq!(setup.whoami("ada").1.trim(), "\"alice\"");
    assert_eq!(provider.admin("GET", "/admin/stats")["refreshes"], 3);
    // A token the provider refuses on its API (revoked, not expired): the tool forgets
    // the grant, and the next call asks to connect.
    provider.admin("POST", "/admin/revoke");
    let (succeeded, out, _) = setup.whoami("ada");
    assert!(
        !succeeded && out.contains("refused the user's token"),
        "{out}"
    );
    assert!(setup.whoami("ada").1.contains("ask them to connect it at"));
    // Revoked at the provider while expired: the engine's refresh is refused
    // (`invalid_grant`), the grant forgotten, and the user asked to connect again.
    provider.admin("POST", "/admin/expires_in?secs=1");
    connect(&setup, "ada");
    provider.admin("POST", "/admin/revoke");
    let before = provider.admin("GET", "/admin/stats");
    let (succeeded, out, err) = setup.whoami("ada");
    assert!(!succeeded, "{out}{err}");
    assert!(out.contains("ask them to connect it at"), "{out}");
    let after = provider.admin("GET", "/admin/stats");
    let asked = before["refresh_attempts"].as_u64().unwrap() + 1;
    assert_eq!(after["refresh_attempts"], asked, "a refresh was asked");
    assert_eq!(after["refreshes"], before["refreshes"], "and refused");
    assert!(
        setup.whoami("ada").1.contains("ask them to connect it at"),
        "forgotten"
    );
}

#[test]
fn a_wrong_state_a_replayed_code_and_another_browser_connect_nothing() {
    let port = free_port();
    let provider = Provider::start(&format!("http://127.0.0.1:{port}/oauth/callback"));
    let setup = Setup::new("refused", port, &provider);
    let _served = setup.serve();
    let (cookie, callback) = to_callback(&setup.connect_link("ada"));
    let code = callback
        .split("code=")
        .nth(1)
        .unwrap()
        .split('&')
        .next()
        .unwrap();
    let engine = format!("http://127.0.0.1:{port}/oauth/callback");
    // Another browser (no cookie, or another's): refused, and the sign-in still stands.
    let (status, _, body) = request("GET", &callback, None);
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("started in another browser"), "{body}");
    let state = callback
        .split("state=")
        .nth(1)
        .unwrap()
        .split('&')
        .next()
        .unwrap();
    let other = format!("engine_oauth_{state}=0123");
    let (status, _, _) = request("GET", &callback, Some(&other));
    assert_eq!(status, 400);
    // A state the engine never made (a connect link's id given as one, too), in a
    // cookie to match: unknown.
    let zeros = "0".repeat(32);
    let forged = format!("{engine}?state={zeros}&code={code}");
    let (status, _, body) = request(
        "GET",
        &forged,
        Some(&format!("engine_oauth_{zeros}={zeros}")),
    );
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("unknown, already used or expired"), "{body}");
    // The real one, once; the same again is a replay.
    let (status, _, body) = request("GET", &callback, Some(&cookie));
    assert_eq!(status, 200, "{body}");
    let (status, _, body) = request("GET", &callback, Some(&cookie));
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("unknown, already used or expired"), "{body}");
    // A connect link works until a sign-in from it completes: a previewer that opens it
    // first spends nothing. Then it is spent.
    let link = setup.connect_link("eve");
    assert_eq!(request("GET", &link, None).0, 302, "a previewer's visit");
    let (cookie, callback) = to_callback(&link);
    assert_eq!(request("GET", &callback, Some(&cookie)).0, 200);
    assert_eq!(request("GET", &link, None).0, 400, "spent once connected");
    // A code injected into another sign-in: the provider refuses it (PKCE), and nothing
    // is connected.
    let (cookie, callback) = to_callback(&setup.connect_link("zoe"));
    let state = callback
        .split("state=")
        .nth(1)
        .unwrap()
        .split('&')
        .next()
        .unwrap();
    let injected = format!("{engine}?code={code}&state={state}");
    let (status, _, body) = request("GET", &injected, Some(&cookie));
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("the provider refused the sign-in"), "{body}");
    assert!(setup.whoami("zoe").1.contains("ask them to connect it at"));
    // The provider saying no connects nothing.
    let (status, _, body) = request(
        "GET",
        &format!("{engine}?error=access_denied&state=x"),
        None,
    );
    assert_eq!(status, 400);
    assert!(
        body.contains("did not grant access (access_denied)"),
        "{body}"
    );
    assert_eq!(setup.whoami("ada").1.trim(), "\"alice\"");
}
