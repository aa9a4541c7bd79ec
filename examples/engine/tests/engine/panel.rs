//! The web panel in a real browser: Debian's Chromium, headless, driven by Selenium
//! (tests/panel/browser.py) against `engine serve` with a token, llmock as the model.
//! Each browser test saves a screenshot in `target/panel-screenshots/`
//! (scripts/panel-screenshots copies the README's into docs/panel/); the tests at the end
//! speak raw HTTP to the guards.

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
    // This run's screenshot, not one an earlier run left.
    let _ = std::fs::remove_file(plan["screenshot"].as_str().unwrap());
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
    let shot = std::fs::read(plan["screenshot"].as_str().unwrap())
        .unwrap_or_else(|_| panic!("the {scenario} saved its screenshot"));
    assert!(shot.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG");
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

fn texts(value: &Value) -> Vec<&str> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("a list: {value}"))
        .iter()
        .map(|item| item.as_str().unwrap())
        .collect()
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
            .ends_with("/login?next=%2Fextensions"),
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
    // Signed in, the browser is where it asked to be.
    assert!(
        seen["signed_in_at"]
            .as_str()
            .unwrap()
            .ends_with("/extensions"),
        "{seen}"
    );
    assert_eq!(seen["h1"], "Extensions");
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
    assert!(
        texts(&seen["plugins"]).contains(&"Acme acme-crm 0.1.0"),
        "{seen}"
    );
    assert_eq!(
        seen["acme_description"],
        "Stato degli ordini e appuntamenti dal gestionale Acme."
    );
    let categories = texts(&seen["categories"]);
    assert!(categories.contains(&"Ordini"), "{categories:?}");
    assert!(categories.contains(&"Senza categoria"), "{categories:?}");
    // Annotations translated; why the agent leaves a tool out, as `engine tools` says.
    let card = &seen["contact_card"];
    assert_eq!(
        texts(&card["tags"]),
        ["sola lettura", "mondo aperto", "solo in una conversazione"]
    );
    assert_eq!(card["state"], "escluso");
    assert!(
        texts(&card["reasons"]).contains(&"escluso: the secret `crm_api_key` is not configured"),
        "{card}"
    );
    // The hooks, with position, summary and timeout.
    let hooks: Vec<Vec<&str>> = seen["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(texts)
        .collect();
    assert!(
        hooks.contains(&vec![
            "message_received",
            "100",
            "acme:order_ids_hint",
            "Spiega gli identificativi Acme quando si parla di ordini.",
            "2000 ms"
        ]),
        "{hooks:?}"
    );
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
    // Without JavaScript: the panel's forms alone.
    let seen = browse(
        "switch",
        &authority,
        json!({ "tool": "weather:weather", "refused_tool": "contacts:log_contact", "javascript": false }),
    );
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
    // `engine tools` on the written file equips every tool it did but that one.
    let after = equipped(&setup.config());
    let expected: Vec<String> = before
        .into_iter()
        .filter(|id| id != "weather:weather")
        .collect();
    assert_eq!(after, expected);
    // A tool the agent cannot equip is not enabled, the file not written, and the page
    // says why.
    let refused = seen["refused"].as_str().unwrap();
    assert!(
        refused.starts_with("the engine refused the change, and nothing was written")
            && refused.contains("enables `contacts:log_contact`, which the agent cannot equip"),
        "{refused}"
    );
    assert_eq!(std::fs::read_to_string(setup.config()).unwrap(), written);
    // The language switcher: the next page is in Italian.
    assert_eq!(seen["switched_language"]["h1"], "bot · Strumenti", "{seen}");
    assert!(
        seen["switched_language"]["url"]
            .as_str()
            .unwrap()
            .ends_with("/agents/bot/tools"),
        "{seen}"
    );
    drop(served);
}

#[test]
fn a_broken_file_dropped_into_tools_d_shows_its_error_within_five_seconds() {
    let mock = Llmock::start();
    let setup = setup("extensions", &mock);
    let (served, authority) = serve(&setup, Some(TOKEN));
    let file = setup.dir.join("tools.d/echo.json");
    let mended = json!({
        "namespace": "shell",
        "name": "echo",
        "description": "Answers what it is given.",
        "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"], "additionalProperties": false},
        "command": ["cat"]
    });
    let seen = browse(
        "extension_error",
        &authority,
        json!({ "file": file, "broken": "{ \"namespace\": \"shell\", ", "mended": mended.to_string() }),
    );
    assert!(seen["seconds"].as_f64().unwrap() < 5.0, "{seen}");
    assert_eq!(seen["state"], "skipped", "{seen}");
    assert!(
        seen["error"]
            .as_str()
            .unwrap()
            .contains("EOF while parsing"),
        "{seen}"
    );
    // Mended, the page follows again: its tool is offered.
    assert_eq!(seen["mended_state"], "loaded", "{seen}");
    assert_eq!(seen["mended_tools"], json!(["shell:echo"]), "{seen}");
    drop(served);
}

#[test]
fn a_chat_streams_the_reply_with_a_collapsed_activity_line_that_expands_and_ends_ok() {
    let mock = Llmock::start();
    let setup = setup("chat", &mock);
    let crm = setup.dir.join("crm.jsonl");
    // The reply's first token waits: the call's line has ended by then. The staged
    // action is performed once the reply is.
    mock.script(json!([
        {"type": "slow_first_token", "seconds": 1, "times": 2},
        {"type": "reply", "tool_calls": [
            {"name": "weather__weather", "arguments": {"city": "Paris", "days": 1, "units": null}},
            {"name": "contacts__log_contact", "arguments": {"outcome": "interested", "call_back": null, "note": "Asked about Paris."}}
        ]},
        {"type": "reply", "text": "Mild in Paris."}
    ]));
    let (served, authority) = serve_with_env(
        &setup,
        &[("ENGINE_SECRET__bot__crm_book", crm.to_str().unwrap())],
    );
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
    // What the log showed, in order: each line collapsed, its status once the call
    // ended, then the reply as it streamed, then the end.
    let in_order = texts(&seen["in_order"]);
    let at = |prefix: &str| {
        in_order
            .iter()
            .position(|seen| seen.starts_with(prefix))
            .unwrap_or_else(|| panic!("{prefix} in {in_order:?}"))
    };
    assert_eq!(
        &in_order[..2],
        ["line:collapsed", "line:collapsed"],
        "{in_order:?}"
    );
    assert!(at("status:ok · ") < at("reply"), "{in_order:?}");
    assert!(at("reply") < at("done"), "{in_order:?}");
    assert_eq!(seen["reply"], json!(["Mild in Paris."]), "{seen}");
    assert!(
        seen["done"].as_str().unwrap().starts_with("answered"),
        "{seen}"
    );
    assert_eq!(
        seen["actions"],
        json!(["contacts:log_contact: performed"]),
        "{seen}"
    );
    assert_eq!(
        std::fs::read_to_string(&crm).unwrap().lines().count(),
        1,
        "performed once"
    );

    // The conversation is the agent's most recent, with its history, its turn and its
    // action.
    let seen = browse("conversations", &authority, json!({}));
    assert_eq!(seen["listed"][1], "panel", "{seen}");
    assert_eq!(
        &seen["listed"].as_array().unwrap()[2..4],
        [json!("1"), json!("5")],
        "{seen}"
    );
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
    let turn = texts(&seen["turns"][0]);
    assert_eq!(turn[1], "answered", "{seen}");
    assert!(turn[2].ends_with("2 requests"), "{seen}");
    assert_eq!(
        texts(&seen["actions"][0])[..2],
        ["contacts:log_contact", "performed"],
        "{seen}"
    );
    drop(served);
}

#[test]
fn a_knowledge_document_is_uploaded_found_and_deleted() {
    let mock = Llmock::start();
    let setup = setup("knowledge", &mock);
    let ferry: PathBuf = setup.dir.join("harbour-notes.md");
    std::fs::write(
        &ferry,
        "# Harbour\nThe ferry leaves at seven from pier nine.\n",
    )
    .unwrap();
    let other: PathBuf = setup.dir.join("lighthouse.txt");
    std::fs::write(&other, "The lighthouse is white.\n").unwrap();
    let (served, authority) = serve(&setup, Some(TOKEN));
    let seen = browse(
        "knowledge",
        &authority,
        json!({ "files": [ferry, other], "query": "ferry", "agent": "bot" }),
    );
    assert_eq!(
        seen["uploaded"],
        json!(["created harbour-notes.md", "created lighthouse.txt"]),
        "{seen}"
    );
    assert_eq!(
        seen["listed"],
        json!(["harbour-notes.md", "lighthouse.txt"]),
        "{seen}"
    );
    assert_eq!(
        seen["origins"],
        json!(["operator: panel", "operator: panel"]),
        "{seen}"
    );
    assert_eq!(seen["found"], json!(["harbour-notes.md"]), "{seen}");
    assert_eq!(seen["deleted"], "deleted harbour-notes.md", "{seen}");
    assert_eq!(seen["left"], json!(["lighthouse.txt"]), "{seen}");
    assert_eq!(seen["found_after"], json!([]), "{seen}");
    assert_eq!(
        seen["wrong_confirm"], "nothing wiped: `confirm` must be the agent's name, `bot`",
        "{seen}"
    );
    assert_eq!(seen["kept"], json!(["lighthouse.txt"]), "{seen}");
    assert_eq!(seen["wiped"], "wiped 1 documents", "{seen}");
    assert_eq!(seen["after_wipe"], json!([]), "{seen}");
    drop(served);
}

#[test]
fn a_secret_set_in_the_panel_is_write_only_equips_its_tool_and_the_environment_still_wins() {
    let mock = Llmock::start();
    let setup = setup("secret", &mock);
    let value = "crm-book-path-set-in-the-browser-0451";
    let override_attempt = "set-in-the-panel-under-the-environment-0452";
    assert!(!equipped(&setup.config())
        .iter()
        .any(|id| id == "contacts:log_contact"));
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
        json!({
            "key": "crm_book", "value": value, "tool": "contacts:log_contact",
            "env_key": "crm_api_key", "env_override": override_attempt,
        }),
    );
    assert_eq!(seen["before"]["state"], "left out", "{seen}");
    assert_eq!(
        seen["before"]["reasons"],
        json!(["left out: the secret `crm_book` is not configured"]),
        "{seen}"
    );
    let saved = &seen["saved"];
    assert_eq!(saved["kind"], "password", "{seen}");
    assert_eq!(
        saved["flash"], "saved crm_book for bot; it is not shown again",
        "{seen}"
    );
    assert_eq!(
        (&saved["source"], &saved["field_value"]),
        (&json!("panel"), &json!("")),
        "{seen}"
    );
    assert_eq!(seen["equipped"]["state"], "equipped", "{seen}");
    // The environment's variable wins over a value set in the panel, and the page says so.
    let overridden = &seen["overridden"];
    assert!(
        overridden["flash"]
            .as_str()
            .unwrap()
            .ends_with("still wins"),
        "{seen}"
    );
    assert_eq!(overridden["source"], "environment", "{seen}");
    assert!(
        overridden["tag"]
            .as_str()
            .unwrap()
            .contains("wins over the panel"),
        "{seen}"
    );
    assert_eq!(seen["value_in_a_page"], false, "{seen}");
    // Kept in a file only the engine's user reads, under the data directory; never in the
    // configuration file.
    let kept = setup.dir.join("data/panel-secrets.json");
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&kept).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600);
    let held = std::fs::read_to_string(&kept).unwrap();
    assert!(!std::fs::read_to_string(setup.config())
        .unwrap()
        .contains(value));
    // Cleared, the panel's value is gone, and the tool is left out again.
    assert_eq!(
        seen["cleared"]["flash"], "cleared the panel's value of crm_book for bot",
        "{seen}"
    );
    assert_eq!(seen["cleared"]["source"], "unset", "{seen}");
    assert_eq!(seen["after_clear"]["state"], "left out", "{seen}");
    assert!(!held.contains(value), "cleared from the file: {held}");
    assert!(
        held.contains(override_attempt),
        "the value under the environment's is kept: {held}"
    );
    let logged = served.stop();
    assert!(
        !logged.contains(value) && !logged.contains(override_attempt),
        "{logged}"
    );
}

#[test]
fn a_secret_set_before_its_tool_is_enabled_lets_an_agent_with_a_list_enable_it() {
    let mock = Llmock::start();
    let setup = setup("listed", &mock);
    let config = std::fs::read_to_string(setup.config()).unwrap();
    let config = config.replace(
        "[agents.bot]\n",
        "[agents.bot]\ntools = [\"weather:weather\"]\n",
    );
    std::fs::write(setup.config(), config).unwrap();
    let (served, authority) = serve(&setup, Some(TOKEN));
    let post = |path: &str, body: &str| {
        exchange(
            &authority,
            &format!("POST {path} HTTP/1.1\r\nhost: {authority}\r\nauthorization: Bearer {TOKEN}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len()),
        )
    };
    // No tool the agent enables reads it yet: kept all the same.
    let set = post(
        "/v1/admin/agents/bot/secrets/crm_book",
        r#"{"value":"/tmp/crm-book.jsonl"}"#,
    );
    assert!(set.starts_with("HTTP/1.1 200"), "{set}");
    let enabled = post(
        "/v1/admin/agents/bot/tools",
        r#"{"tool":"contacts:log_contact","enabled":true}"#,
    );
    assert!(
        enabled.starts_with("HTTP/1.1 200") && enabled.contains(r#""equipped":true"#),
        "{enabled}"
    );
    assert_eq!(
        equipped(&setup.config()),
        ["contacts:log_contact", "weather:weather"]
    );
    // Switched off again, the secret stays and nothing is refused.
    let disabled = post(
        "/v1/admin/agents/bot/tools",
        r#"{"tool":"contacts:log_contact","enabled":false}"#,
    );
    assert!(disabled.starts_with("HTTP/1.1 200"), "{disabled}");
    assert_eq!(equipped(&setup.config()), ["weather:weather"]);
    // A payload that says neither value nor clearing changes nothing.
    let misspelt = post("/v1/admin/agents/bot/secrets/crm_book", r#"{"Value":"x"}"#);
    assert!(misspelt.starts_with("HTTP/1.1 400"), "{misspelt}");
    let kept = std::fs::read_to_string(setup.dir.join("data/panel-secrets.json")).unwrap();
    assert!(kept.contains("/tmp/crm-book.jsonl"), "{kept}");
    drop(served);
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

/// The session cookie `answer` sets, as a `cookie` header's value.
fn session_of(answer: &str) -> &str {
    let set = header(answer, "set-cookie").unwrap_or_else(|| panic!("a session: {answer}"));
    set.split(';').next().unwrap()
}

/// The CSRF token of the panel's page `page` (its `<meta name="csrf">`).
fn csrf_of(page: &str) -> &str {
    let after = page
        .split("name=\"csrf\" content=\"")
        .nth(1)
        .unwrap_or_else(|| panic!("a CSRF token: {page}"));
    after.split('"').next().unwrap()
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
    let signed = form_post(
        &authority,
        "/login",
        "",
        &format!("token={TOKEN}&next=%2F%09%2Fevil.example"),
    );
    assert!(signed.starts_with("HTTP/1.1 303"), "{signed}");
    assert_eq!(header(&signed, "location"), Some("/"));
    let cookie = header(&signed, "set-cookie").unwrap();
    assert!(
        cookie.starts_with(&format!("engine_session_{port}=")),
        "{cookie}"
    );
    assert!(
        cookie.contains("; HttpOnly") && cookie.contains("; SameSite=Strict"),
        "{cookie}"
    );
    let session = session_of(&signed);
    let page = exchange(
        &authority,
        &format!("GET /agents/bot/tools HTTP/1.1\r\nhost: {authority}\r\naccept: text/html\r\ncookie: {session}\r\nconnection: close\r\n\r\n"),
    );
    let csrf = csrf_of(&page);
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
    assert_eq!(
        std::fs::read_to_string(setup.config()).unwrap(),
        before,
        "nothing was written"
    );
    let done = form_post(
        &authority,
        switch,
        &with_cookie,
        &format!("disable=weather%3Aweather&back=%2F&csrf={csrf}"),
    );
    assert!(done.starts_with("HTTP/1.1 303"), "{done}");
    assert!(std::fs::read_to_string(setup.config())
        .unwrap()
        .contains("tools = ["));
    // A file's upload is a write too.
    let boundary = "panel-boundary";
    let multipart = format!(
        "--{boundary}\r\ncontent-disposition: form-data; name=\"file\"; filename=\"a.md\"\r\ncontent-type: text/markdown\r\n\r\nhello\r\n--{boundary}--\r\n"
    );
    let upload = exchange(
        &authority,
        &format!("POST /v1/admin/agents/bot/knowledge HTTP/1.1\r\nhost: {authority}\r\n{with_cookie}content-type: multipart/form-data; boundary={boundary}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{multipart}", multipart.len()),
    );
    assert!(upload.starts_with("HTTP/1.1 403"), "{upload}");
    // The session is the panel's: `/mcp` wants the token.
    let mcp = exchange(
        &authority,
        &format!("POST /mcp HTTP/1.1\r\nhost: {authority}\r\ncookie: {session}\r\nx-csrf-token: {csrf}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{{}}"),
    );
    assert!(mcp.starts_with("HTTP/1.1 401"), "{mcp}");
    // Without the token nor a session, an API request is refused; a page goes to the
    // login form.
    let api = exchange(
        &authority,
        &format!("GET /v1/admin/agents HTTP/1.1\r\nhost: {authority}\r\nconnection: close\r\n\r\n"),
    );
    assert!(api.starts_with("HTTP/1.1 401"), "{api}");
    let page = exchange(&authority, &format!("GET /extensions HTTP/1.1\r\nhost: {authority}\r\naccept: text/html\r\nconnection: close\r\n\r\n"));
    assert_eq!(
        header(&page, "location"),
        Some("/login?next=%2Fextensions"),
        "{page}"
    );
    // Signing out needs the CSRF token too; then the session opens nothing.
    let forged = form_post(&authority, "/logout", &with_cookie, "");
    assert!(forged.starts_with("HTTP/1.1 403"), "{forged}");
    let out = form_post(&authority, "/logout", &with_cookie, &format!("csrf={csrf}"));
    assert_eq!(header(&out, "location"), Some("/login"), "{out}");
    assert!(
        header(&out, "set-cookie").is_some_and(|cookie| cookie.contains("Max-Age=0")),
        "{out}"
    );
    let after = exchange(
        &authority,
        &format!("GET /v1/admin/agents HTTP/1.1\r\nhost: {authority}\r\ncookie: {session}\r\nconnection: close\r\n\r\n"),
    );
    assert!(after.starts_with("HTTP/1.1 401"), "{after}");
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
    // A script on this machine, as `/mcp` serves one; a wire name names the tool too,
    // and its id is what the file gets.
    let body = r#"{"tool":"weather__weather","enabled":false}"#;
    let script = exchange(
        &authority,
        &format!("POST {switch} HTTP/1.1\r\nhost: {authority}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len()),
    );
    assert!(script.starts_with("HTTP/1.1 200"), "{script}");
    assert!(script.contains(r#""changed":true"#), "{script}");
    assert!(script.contains(r#""tool":"weather:weather""#), "{script}");
    // A page opened gets a session, whose forms carry its CSRF token.
    let page = exchange(&authority, &format!("GET /agents/bot/tools HTTP/1.1\r\nhost: {authority}\r\naccept: text/html\r\nconnection: close\r\n\r\n"));
    assert!(
        header(&page, "set-cookie").is_some_and(|cookie| cookie.contains("HttpOnly")),
        "{page}"
    );
    assert!(
        page.contains("name=\"csrf\" value=\""),
        "the forms carry the token"
    );
    // That session's write needs its token, and with it is done.
    let listed = || std::fs::read_to_string(setup.config()).unwrap();
    assert!(listed().contains("tools = [\""), "{}", listed());
    assert!(!listed().contains("weather"), "{}", listed());
    let with_cookie = format!("cookie: {}\r\n", session_of(&page));
    let csrf = csrf_of(&page);
    let forged = form_post(&authority, switch, &with_cookie, "enable=weather%3Aweather");
    assert!(forged.starts_with("HTTP/1.1 403"), "{forged}");
    let done = form_post(
        &authority,
        switch,
        &with_cookie,
        &format!("enable=weather%3Aweather&back=%2F&csrf={csrf}"),
    );
    assert!(done.starts_with("HTTP/1.1 303"), "{done}");
    assert!(listed().contains("\"weather:weather\""), "{}", listed());
    drop(served);
}
