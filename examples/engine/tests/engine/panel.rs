//! The web panel in a real browser: Debian's Chromium, headless, driven by Selenium
//! (tests/panel/browser.py) against `engine serve` with a token, llmock as the model.
//! Each test saves a screenshot in `target/panel-screenshots/` (scripts/panel-screenshots
//! copies the README's into docs/panel/).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};
use test_support::llmock::Llmock;

use super::turn_setup::{serve, Setup};

/// `engine serve` for `setup`'s agent `bot` with the token and `env`; answers the server
/// and its authority.
fn serve_with_env(setup: &Setup, env: &[(&str, &str)]) -> (test_support::mcp::Served, String) {
    let mut env = env.to_vec();
    env.push(("ENGINE_MCP_TOKEN", TOKEN));
    let config = setup.config();
    let args = ["--config", config.to_str().unwrap(), "--agent", "bot"];
    let (served, url) =
        test_support::mcp::serve_with_env(env!("CARGO_BIN_EXE_engine"), &args, &env);
    let authority = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    (served, authority)
}

const TOKEN: &str = "panel-token-long-enough-for-the-engine-0123456789";

/// The agent `bot` on llmock, with a knowledge base, and a configuration file with
/// comments the panel's edits must keep.
fn setup(name: &str, mock: &Llmock) -> Setup {
    let setup = Setup::new(&format!("panel-{name}"), mock, "openai", "", "");
    let mut config = std::fs::read_to_string(setup.config()).unwrap();
    config = format!(
        "# The panel's test engine: this comment stays.\n{config}\n\
         # The agent's grants (a comment the switch keeps).\n\
         [agents.bot]\nknowledge = \"manage\" # documents for the Knowledge page\n"
    );
    std::fs::write(setup.config(), config).unwrap();
    std::fs::create_dir_all(setup.dir.join("tools.d")).unwrap();
    setup
}

/// Runs `scenario` of browser.py against `authority`; answers what the browser saw.
fn browse(scenario: &str, authority: &str, extra: Value) -> Value {
    let screenshots = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/panel-screenshots");
    std::fs::create_dir_all(&screenshots).unwrap();
    let mut plan = json!({
        "scenario": scenario,
        "base": format!("http://{authority}"),
        "token": TOKEN,
        "screenshot": screenshots.join(format!("{scenario}.png")),
    });
    for (key, value) in extra.as_object().unwrap() {
        plan[key] = value.clone();
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/panel/browser.py");
    let mut child = Command::new(test_support::python("the panel's tests need Selenium"))
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the browser's driver starts");
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(plan.to_string().as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "the browser's {scenario} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        Path::new(plan["screenshot"].as_str().unwrap()).exists(),
        "the {scenario} saved its screenshot"
    );
    serde_json::from_slice(&output.stdout).expect("the browser's JSON report")
}

/// What `engine tools` says the agent `bot` equips, read from `config`.
fn equipped(config: &Path) -> Vec<String> {
    let output = Command::new(env!("CARGO_BIN_EXE_engine"))
        .arg("--config")
        .arg(config)
        .args(["--agent", "bot", "tools"])
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&output.stdout);
    let equips = listing
        .lines()
        .find_map(|line| line.trim_start().strip_prefix("equips: "))
        .unwrap_or_else(|| panic!("`engine tools` lists what bot equips:\n{listing}"));
    equips.split(", ").map(str::to_owned).collect()
}

#[test]
fn a_browser_signs_in_with_the_token_and_is_refused_without_it() {
    let mock = Llmock::start();
    let setup = setup("login", &mock);
    let (served, authority) = serve(&setup, Some(TOKEN));
    let seen = browse("login", &authority, json!({}));
    assert!(
        seen["sent_to"]
            .as_str()
            .unwrap()
            .contains("/login?next=%2Fagents%2Fbot%2Ftools"),
        "{seen}"
    );
    assert_eq!(
        seen["refused_alert"], "That is not the server's token.",
        "{seen}"
    );
    assert!(
        seen["refused_at"].as_str().unwrap().ends_with("/login"),
        "{seen}"
    );
    assert!(
        seen["signed_in_at"]
            .as_str()
            .unwrap()
            .ends_with("/agents/bot/tools"),
        "{seen}"
    );
    assert_eq!(seen["h1"], "bot · Tools");
    // HttpOnly: no script of a page reads the session.
    assert_eq!(seen["cookie_seen_by_scripts"], "", "{seen}");
    drop(served);
}

#[test]
fn the_tools_page_in_it_it_shows_the_italian_summaries_and_categories() {
    let mock = Llmock::start();
    let setup = setup("italian", &mock);
    let (served, authority) = serve(&setup, Some(TOKEN));
    let seen = browse("tools", &authority, json!({ "language": "it-IT" }));
    assert_eq!(seen["lang"], "it-IT");
    assert_eq!(seen["h1"], "bot · Strumenti");
    let summaries = &seen["summaries"];
    assert_eq!(
        summaries["acme:book_appointment"],
        "Prenota un appuntamento nel CRM."
    );
    assert_eq!(
        summaries["acme:find_orders"],
        "Elenca gli ordini di un cliente."
    );
    assert_eq!(summaries["notes:note_file"], "Fa un file di un appunto.");
    let categories: Vec<&str> = seen["categories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert!(categories.contains(&"Ordini"), "{categories:?}");
    assert!(categories.contains(&"Senza categoria"), "{categories:?}");
    drop(served);
}

#[test]
fn switching_a_tool_off_writes_the_agents_list_keeping_comments_and_the_engine_no_longer_equips_it()
{
    let mock = Llmock::start();
    let setup = setup("switch", &mock);
    let before = equipped(&setup.config());
    assert!(
        before.iter().any(|id| id == "weather:weather"),
        "{before:?}"
    );
    let (served, authority) = serve(&setup, Some(TOKEN));
    let seen = browse("switch", &authority, json!({ "tool": "weather:weather" }));
    assert_eq!(seen["before"], "equipped", "{seen}");
    assert!(
        seen["flash"]
            .as_str()
            .unwrap()
            .starts_with("weather:weather disabled for bot"),
        "{seen}"
    );
    assert_eq!(seen["after"], "disabled", "{seen}");
    assert_eq!(seen["button"], "Enable", "{seen}");
    let written = std::fs::read_to_string(setup.config()).unwrap();
    assert!(
        written.starts_with("# The panel's test engine: this comment stays.\n"),
        "{written}"
    );
    assert!(
        written.contains("# The agent's grants (a comment the switch keeps).\n[agents.bot]"),
        "{written}"
    );
    assert!(
        written.contains("knowledge = \"manage\" # documents for the Knowledge page"),
        "{written}"
    );
    let parsed: toml::Table = written.parse().unwrap();
    let listed: Vec<&str> = parsed["agents"]["bot"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|id| id.as_str().unwrap())
        .collect();
    assert!(!listed.contains(&"weather:weather"), "{listed:?}");
    assert!(listed.contains(&"acme:find_orders"), "{listed:?}");
    // `engine tools` on the written file equips every tool it did but that one.
    let after = equipped(&setup.config());
    let expected: Vec<String> = before
        .into_iter()
        .filter(|id| id != "weather:weather")
        .collect();
    assert_eq!(after, expected);
    drop(served);
}

#[test]
fn a_broken_file_dropped_into_tools_d_shows_its_error_within_five_seconds() {
    let mock = Llmock::start();
    let setup = setup("extensions", &mock);
    let (served, authority) = serve(&setup, Some(TOKEN));
    let broken = setup.dir.join("tools.d/broken.json");
    let seen = browse(
        "extension_error",
        &authority,
        json!({ "file": broken, "text": "{ \"namespace\": \"x\", " }),
    );
    assert!(seen["seconds"].as_f64().unwrap() < 5.0, "{seen}");
    assert!(!seen["error"].as_str().unwrap().is_empty(), "{seen}");
    drop(served);
}

#[test]
fn a_chat_streams_the_reply_with_a_collapsed_activity_line_that_expands_and_ends_ok() {
    let mock = Llmock::start();
    let setup = setup("chat", &mock);
    let crm = setup.dir.join("crm.jsonl");
    // Both requests wait before their first token: the call's line ends before the
    // reply's first word arrives. The staged action is performed once the reply is.
    mock.script(json!([
        {"type": "slow_first_token", "seconds": 2, "times": 2},
        {"type": "reply", "tool_calls": [
            {"name": "weather__weather", "arguments": {"city": "Paris", "days": 1, "units": null}},
            {"name": "contacts__log_contact", "arguments": {"outcome": "interested", "call_back": null, "note": "Asked about Paris."}}
        ]},
        {"type": "reply", "text": "Mild in Paris."}
    ]));
    let (served, authority) =
        serve_with_env(&setup, &[("ENGINE_SECRET__bot__crm_book", crm.to_str().unwrap())]);
    let seen = browse(
        "chat",
        &authority,
        json!({ "message": "Weather in Paris?" }),
    );
    assert_eq!(seen["name"], "weather:weather", "{seen}");
    assert_eq!(seen["collapsed"], true, "{seen}");
    assert_eq!(seen["arguments_hidden_before"], true, "{seen}");
    assert_eq!(seen["arguments_shown_after"], true, "{seen}");
    assert!(
        seen["arguments"]
            .as_str()
            .unwrap()
            .contains("\"city\": \"Paris\""),
        "{seen}"
    );
    let status = seen["status"].as_str().unwrap();
    assert!(
        status.starts_with("ok · ") && status.ends_with(" ms"),
        "{seen}"
    );
    assert_eq!(seen["status_class"], "status ok", "{seen}");
    assert_eq!(seen["reply_when_the_call_ended"], json!([]), "{seen}");
    assert_eq!(seen["reply"], json!(["Mild in Paris."]), "{seen}");
    assert!(
        seen["done"].as_str().unwrap().starts_with("answered"),
        "{seen}"
    );
    assert_eq!(seen["actions"], json!(["contacts:log_contact: performed"]), "{seen}");
    assert_eq!(std::fs::read_to_string(&crm).unwrap().lines().count(), 1, "performed once");

    // The conversation is the agent's most recent, with its history, its turn and its
    // action.
    let seen = browse("conversations", &authority, json!({}));
    assert_eq!(seen["listed"][1], "panel", "{seen}");
    assert_eq!(&seen["listed"].as_array().unwrap()[2..4], [json!("1"), json!("5")], "{seen}");
    assert_eq!(seen["users"], json!(["Weather in Paris?"]), "{seen}");
    assert_eq!(seen["replies"], json!(["Mild in Paris."]), "{seen}");
    assert_eq!(
        seen["activity"],
        json!([
            "weather__weather call",
            "contacts__log_contact call",
            "weather__weather ok",
            "contacts__log_contact ok"
        ]),
        "{seen}"
    );
    assert_eq!(seen["collapsed"], true, "{seen}");
    let turn = seen["turns"][0].as_array().unwrap();
    assert_eq!(turn[1], "answered", "{seen}");
    assert!(turn[2].as_str().unwrap().ends_with("2 requests"), "{seen}");
    assert_eq!(seen["actions"][0][0], "contacts:log_contact", "{seen}");
    assert_eq!(seen["actions"][0][1], "performed", "{seen}");
    drop(served);
}

#[test]
fn a_knowledge_document_is_uploaded_found_and_deleted() {
    let mock = Llmock::start();
    let setup = setup("knowledge", &mock);
    let file: PathBuf = setup.dir.join("harbour-notes.md");
    std::fs::write(
        &file,
        "# Harbour\nThe ferry leaves at seven from pier nine.\n",
    )
    .unwrap();
    let (served, authority) = serve(&setup, Some(TOKEN));
    let seen = browse(
        "knowledge",
        &authority,
        json!({ "file": file, "query": "ferry" }),
    );
    assert_eq!(
        seen["uploaded"]["flash"], "created harbour-notes.md",
        "{seen}"
    );
    assert_eq!(seen["uploaded"]["origin"], "operator: panel", "{seen}");
    assert_eq!(seen["found"], json!(["harbour-notes.md"]), "{seen}");
    assert_eq!(seen["deleted_flash"], "deleted harbour-notes.md", "{seen}");
    assert_eq!(seen["left"], json!([]), "{seen}");
    drop(served);
}

#[test]
fn a_secret_set_in_the_panel_is_write_only_equips_its_tool_and_the_environment_still_wins() {
    let mock = Llmock::start();
    let setup = setup("secret", &mock);
    let value = "crm-book-path-set-in-the-browser-0451";
    let (served, authority) = serve_with_env(
        &setup,
        &[(
            "ENGINE_SECRET__bot__crm_api_key",
            "from-the-environment-0001",
        )],
    );
    let seen = browse(
        "secret",
        &authority,
        json!({ "key": "crm_book", "env_key": "crm_api_key", "value": value, "tool": "contacts:log_contact" }),
    );
    assert_eq!(seen["kind"], "password", "{seen}");
    assert_eq!(seen["environment"]["source"], "environment", "{seen}");
    assert!(
        seen["environment"]["text"]
            .as_str()
            .unwrap()
            .contains("wins over the panel"),
        "{seen}"
    );
    assert_eq!(
        seen["flash"], "saved crm_book for bot; it is not shown again",
        "{seen}"
    );
    assert_eq!(
        seen["after"],
        json!({ "source": "panel", "field_value": "" }),
        "{seen}"
    );
    assert_eq!(seen["value_in_a_page"], false, "{seen}");
    assert_eq!(seen["tool_state"], "equipped", "{seen}");
    // Kept in a file only the engine's user reads, under the data directory; never in
    // the configuration file.
    let kept = setup.dir.join("data/panel-secrets.json");
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&kept).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600);
    assert!(std::fs::read_to_string(&kept).unwrap().contains(value));
    assert!(!std::fs::read_to_string(setup.config())
        .unwrap()
        .contains(value));
    // `engine tools`, a process of its own, reads it too; the value is in no log line.
    assert!(equipped(&setup.config())
        .iter()
        .any(|id| id == "contacts:log_contact"));
    let logged = served.stop();
    assert!(!logged.contains(value), "{logged}");
}

#[test]
fn a_conversation_of_a_thousand_messages_is_served_a_page_at_a_time() {
    use engine_core::conversation::Message;
    let mock = Llmock::start();
    let setup = setup("long", &mock);
    // A thousand messages, stored as the engine stores a turn's.
    let store =
        engine_sqlite::open_conversations(&setup.dir.join("data/conversations.sqlite")).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        store.claim("long-one", "bot", "ada").await.unwrap();
        let messages: Vec<Message> = (0..1000)
            .map(|n| Message::user(format!("message {n}")))
            .collect();
        let mut lease = store.begin_turn("long-one").await.unwrap().unwrap();
        store.append(&mut lease, 0, &messages).await.unwrap();
        store.end_turn(lease, None).await.unwrap();
    });
    drop(store);
    let (served, authority) = serve(&setup, Some(TOKEN));
    let get = |path: &str| {
        use std::io::Read as _;
        let mut answer = String::new();
        super::turn_setup::send(&authority, "GET", path, "", Some(TOKEN))
            .read_to_string(&mut answer)
            .unwrap();
        let (head, body) = answer.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        body.to_owned()
    };
    let last: Value =
        serde_json::from_str(&get("/v1/admin/agents/bot/conversations/long-one")).unwrap();
    assert_eq!(
        (last["total"].as_u64(), last["offset"].as_u64()),
        (Some(1000), Some(900))
    );
    let texts: Vec<&str> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(
        (texts.len(), texts[0], texts[99]),
        (100, "message 900", "message 999")
    );
    let first: Value = serde_json::from_str(&get(
        "/v1/admin/agents/bot/conversations/long-one?offset=0&limit=10",
    ))
    .unwrap();
    assert_eq!(first["messages"][9]["content"], "message 9");
    // The page shows one page of it, with the way to the page before.
    let page = get("/agents/bot/conversations/long-one");
    assert_eq!(page.matches("<div class=\"user\">").count(), 100);
    assert!(
        page.contains("?offset=800&amp;limit=100"),
        "the link to the older page"
    );
    let listed: Value = serde_json::from_str(&get("/v1/admin/agents/bot/conversations")).unwrap();
    assert_eq!(listed["conversations"][0]["messages"], 1000);
    drop(served);
}

/// Sends `request` (a whole HTTP/1.1 request) to `authority`; answers the whole answer.
fn exchange(authority: &str, request: &str) -> String {
    use std::io::{Read as _, Write as _};
    let mut client = std::net::TcpStream::connect(authority).unwrap();
    client
        .set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    client.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    client.read_to_string(&mut answer).unwrap();
    answer
}

/// A form's POST of `body` to `path`, with `headers` (each ending in CRLF).
fn form_post(authority: &str, path: &str, headers: &str, body: &str) -> String {
    exchange(
        authority,
        &format!(
            "POST {path} HTTP/1.1\r\nhost: {authority}\r\n{headers}content-type: application/x-www-form-urlencoded\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        ),
    )
}

/// The value of the header `name` in `answer`'s head.
fn header<'a>(answer: &'a str, name: &str) -> Option<&'a str> {
    let head = answer.split("\r\n\r\n").next().unwrap();
    head.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.eq_ignore_ascii_case(name).then(|| value.trim())
    })
}

#[test]
fn a_sessions_write_needs_its_csrf_token_and_a_session_opens_no_mcp() {
    let mock = Llmock::start();
    let setup = setup("csrf", &mock);
    let (served, authority) = serve(&setup, Some(TOKEN));
    let port = authority.rsplit(':').next().unwrap();
    // A wrong token signs nobody in.
    let refused = form_post(&authority, "/login", "", "token=not-the-token&next=%2F");
    assert!(refused.starts_with("HTTP/1.1 401"), "{refused}");
    assert_eq!(header(&refused, "set-cookie"), None);
    // The token signs in, and a `next` that a browser would read as another site's
    // (a tab it drops) goes home instead.
    let signed = form_post(&authority, "/login", "", &format!("token={TOKEN}&next=%2F%09%2Fevil.example"));
    assert!(signed.starts_with("HTTP/1.1 303"), "{signed}");
    assert_eq!(header(&signed, "location"), Some("/"));
    let cookie = header(&signed, "set-cookie").unwrap();
    assert!(cookie.starts_with(&format!("engine_session_{port}=")), "{cookie}");
    assert!(cookie.contains("; HttpOnly") && cookie.contains("; SameSite=Strict"), "{cookie}");
    let session = cookie.split(';').next().unwrap();
    let page = exchange(
        &authority,
        &format!("GET /agents/bot/tools HTTP/1.1\r\nhost: {authority}\r\naccept: text/html\r\ncookie: {session}\r\nconnection: close\r\n\r\n"),
    );
    let csrf = page.split("name=\"csrf\" content=\"").nth(1).unwrap().split('"').next().unwrap();
    let before = std::fs::read_to_string(setup.config()).unwrap();
    let switch = "/v1/admin/agents/bot/tools";
    let with_cookie = format!("cookie: {session}\r\n");
    for forged in [
        "disable=weather%3Aweather&back=%2F",
        "disable=weather%3Aweather&back=%2F&csrf=0000",
    ] {
        let answer = form_post(&authority, switch, &with_cookie, forged);
        assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
    }
    let wrong_header = form_post(
        &authority,
        switch,
        &format!("{with_cookie}x-csrf-token: 00\r\n"),
        "disable=weather%3Aweather",
    );
    assert!(wrong_header.starts_with("HTTP/1.1 403"), "{wrong_header}");
    assert_eq!(std::fs::read_to_string(setup.config()).unwrap(), before, "nothing was written");
    let done = form_post(&authority, switch, &with_cookie, &format!("disable=weather%3Aweather&back=%2F&csrf={csrf}"));
    assert!(done.starts_with("HTTP/1.1 303"), "{done}");
    assert!(std::fs::read_to_string(setup.config()).unwrap().contains("tools = ["));
    // The session is the panel's: `/mcp` wants the token.
    let mcp = exchange(
        &authority,
        &format!("POST /mcp HTTP/1.1\r\nhost: {authority}\r\ncookie: {session}\r\nx-csrf-token: {csrf}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{{}}"),
    );
    assert!(mcp.starts_with("HTTP/1.1 401"), "{mcp}");
    // Without the token nor a session, an API request is refused; a page goes to the
    // login form.
    let api = exchange(&authority, &format!("GET /v1/admin/agents HTTP/1.1\r\nhost: {authority}\r\nconnection: close\r\n\r\n"));
    assert!(api.starts_with("HTTP/1.1 401"), "{api}");
    let page = exchange(&authority, &format!("GET /extensions HTTP/1.1\r\nhost: {authority}\r\naccept: text/html\r\nconnection: close\r\n\r\n"));
    assert_eq!(header(&page, "location"), Some("/login?next=%2Fextensions"), "{page}");
    drop(served);
}

#[test]
fn without_a_token_a_browsers_admin_write_needs_the_panels_session_and_a_script_does_not() {
    let mock = Llmock::start();
    let setup = setup("open", &mock);
    let (served, authority) = serve(&setup, None);
    let before = std::fs::read_to_string(setup.config()).unwrap();
    let switch = "/v1/admin/agents/bot/tools";
    // A page of another local port, without the panel's session.
    let from_a_page = form_post(
        &authority,
        switch,
        "origin: http://localhost:3000\r\n",
        "disable=weather%3Aweather",
    );
    assert!(from_a_page.starts_with("HTTP/1.1 403"), "{from_a_page}");
    assert_eq!(std::fs::read_to_string(setup.config()).unwrap(), before);
    // A script on this machine, as `/mcp` serves one.
    let body = r#"{"tool":"weather:weather","enabled":false}"#;
    let script = exchange(
        &authority,
        &format!("POST {switch} HTTP/1.1\r\nhost: {authority}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len()),
    );
    assert!(script.starts_with("HTTP/1.1 200"), "{script}");
    assert!(script.contains(r#""changed":true"#), "{script}");
    // A page opened gets a session, whose forms carry its CSRF token.
    let page = exchange(&authority, &format!("GET /agents/bot/tools HTTP/1.1\r\nhost: {authority}\r\naccept: text/html\r\nconnection: close\r\n\r\n"));
    assert!(header(&page, "set-cookie").is_some_and(|cookie| cookie.contains("HttpOnly")), "{page}");
    assert!(page.contains("name=\"csrf\" value=\""), "the forms carry the token");
    drop(served);
}
