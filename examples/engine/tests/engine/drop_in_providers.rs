//! Drop-in providers (issue 37 #1): a JSON file per provider in `providers.d/`, beside
//! the configuration, used by an agent's `turn.provider`, picked up by a running `engine
//! serve` without a restart, listed with its state on `/v1/extensions`; against llmock.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::turn_setup::{send, serve_config};
use serde_json::{json, Value};
use test_support::llmock::Llmock;

/// A configuration whose agent `bot` runs turns on the provider `fast`, with its key,
/// which no table configures: only a file of `providers.d/` can give it.
struct Setup {
    dir: PathBuf,
}

impl Setup {
    fn new(test: &str, extra: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("engine-providers-d-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("providers.d")).unwrap();
        std::fs::write(
            dir.join("engine.toml"),
            format!(
                "data_dir = {:?}\n[agents.bot]\nsecrets = {{ fast_key = \"sk-drop-in-key-1234\" }}\n[agents.bot.turn]\nprovider = \"fast\"\n{extra}",
                dir.join("data")
            ),
        )
        .unwrap();
        Self { dir }
    }

    fn config(&self) -> PathBuf {
        self.dir.join("engine.toml")
    }

    /// Writes `providers.d/<file>` atomically (a rename), as an operator's tool would.
    fn drop_in(&self, file: &str, provider: &Value) {
        let temporary = self.dir.join(format!(".{file}.tmp"));
        std::fs::write(&temporary, provider.to_string()).unwrap();
        std::fs::rename(&temporary, self.dir.join("providers.d").join(file)).unwrap();
    }

    fn remove(&self, file: &str) {
        std::fs::remove_file(self.dir.join("providers.d").join(file)).unwrap();
    }

    /// `engine --agent bot ARGS` with this configuration.
    fn engine(&self, args: &[&str]) -> std::process::Output {
        Command::new(env!("CARGO_BIN_EXE_engine"))
            .arg("--config")
            .arg(self.config())
            .args(["--agent", "bot"])
            .args(args)
            .env_remove("RUST_LOG")
            .output()
            .unwrap()
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The provider file of llmock's `model`, under the name `name`.
fn provider(name: &str, mock: &Llmock, model: &str) -> Value {
    json!({
        "name": name,
        "wire": "openai",
        "base_url": mock.openai_url(),
        "model": model,
        "api_key_secret": "fast_key",
        "usd_per_million_input": 1.0,
        "usd_per_million_output": 2.0
    })
}

/// One turn over HTTP: the answer's events.
fn turn(authority: &str, message: &str) -> Vec<Value> {
    let body = json!({"message": message}).to_string();
    let mut answer = String::new();
    send(authority, "POST", "/v1/agents/bot/turns", &body, None)
        .read_to_string(&mut answer)
        .unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let (_, body) = answer.split_once("\r\n\r\n").unwrap();
    // Chunked: the events are the lines that are JSON.
    body.lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event.get("type").is_some())
        .collect()
}

fn stop(events: &[Value]) -> &Value {
    &events.last().expect("events")["stop"]
}

fn extensions(authority: &str) -> Value {
    let mut answer = String::new();
    send(authority, "GET", "/v1/extensions", "", None)
        .read_to_string(&mut answer)
        .unwrap();
    let (_, body) = answer.split_once("\r\n\r\n").unwrap();
    serde_json::from_str(body).unwrap_or_else(|_| panic!("JSON: {answer}"))
}

/// Polls `/v1/extensions` until `ready` holds of its `providers`, for 10 s at most.
fn wait_for_providers(authority: &str, what: &str, ready: impl Fn(&Value) -> bool) -> Value {
    let started = Instant::now();
    loop {
        let providers = extensions(authority)["providers"].clone();
        if ready(&providers) {
            return providers;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{what}: never seen, last {providers:#}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn path_name(file: &Value) -> String {
    Path::new(file["path"].as_str().unwrap())
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

#[test]
fn a_provider_file_is_used_and_replaced_and_its_removal_fails_the_next_turn_clearly() {
    let mock = Llmock::start();
    let setup = Setup::new("serve", "");
    // Without a file, the agent's provider is unknown: start-up refuses, saying where
    // one may come from.
    let refused = setup.engine(&["tools"]);
    assert_eq!(refused.status.code(), Some(1));
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains("`agents.bot.turn.provider` names `fast`, which is not configured")
            && said.contains("a file of the providers directory"),
        "{said}"
    );

    setup.drop_in("fast.json", &provider("fast", &mock, &mock.model()));
    let (served, authority) = serve_config(&setup.config(), None);
    mock.script(json!([{"type": "reply", "text": "From the file."}]));
    let events = turn(&authority, "Hello?");
    assert_eq!(stop(&events)["reason"], "answered", "{events:#?}");
    let journal = mock.journal();
    assert_eq!(journal.len(), 1);
    assert_eq!(journal[0]["body"]["model"], mock.model());
    let providers = extensions(&authority)["providers"].clone();
    assert_eq!(providers.as_array().unwrap().len(), 1, "{providers:#}");
    assert_eq!(providers[0]["name"], "fast");
    assert_eq!(providers[0]["state"], "ok");
    assert_eq!(providers[0]["used_by"], json!(["bot"]));

    // Changed while serving: the next turn asks the new model.
    let other = mock.other_model("second");
    setup.drop_in("fast.json", &provider("fast", &mock, &other));
    mock.script(json!([{"type": "reply", "text": "From the new model."}]));
    let started = Instant::now();
    loop {
        // The watch reads the change in a moment; a turn before it asks the old model.
        let events = turn(&authority, "Hello again?");
        let asked = mock.journal().last().unwrap()["body"]["model"].clone();
        if asked == json!(other) {
            assert_eq!(stop(&events)["reason"], "answered", "{events:#?}");
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the changed file was never used"
        );
        mock.script(json!([{"type": "reply", "text": "From the old model."}]));
        std::thread::sleep(Duration::from_millis(200));
    }

    // Removed: the listing drops it, and the next turn fails saying why.
    setup.remove("fast.json");
    wait_for_providers(&authority, "the file gone", |providers| {
        providers.as_array().is_some_and(Vec::is_empty)
    });
    let asked = mock.journal().len();
    let events = turn(&authority, "Anyone?");
    let ended = stop(&events).clone();
    assert_eq!(ended["reason"], "failed", "{events:#?}");
    assert!(
        ended["message"]
            .as_str()
            .unwrap()
            .contains("runs turns on the provider `fast`, which is not configured and which no file of the providers directory offers now"),
        "{ended}"
    );
    assert_eq!(mock.journal().len(), asked, "no model was asked");
    // Added back: the next turn uses it again.
    setup.drop_in("fast.json", &provider("fast", &mock, &mock.model()));
    wait_for_providers(&authority, "the file back", |providers| {
        providers[0]["state"] == "ok"
    });
    mock.script(json!([{"type": "reply", "text": "Back."}]));
    let events = turn(&authority, "Back?");
    assert_eq!(stop(&events)["reason"], "answered", "{events:#?}");
    let log = served.stop();
    assert!(
        !log.contains("sk-drop-in-key-1234"),
        "the key was logged:\n{log}"
    );
}

#[test]
fn bad_provider_files_are_listed_with_their_errors_and_a_good_one_beside_them_is_used() {
    let mock = Llmock::start();
    let setup = Setup::new("bad", "[providers.slow]\nwire = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n");
    setup.drop_in("fast.json", &provider("fast", &mock, &mock.model()));
    let mut unknown_key = provider("typo", &mock, "m");
    unknown_key["api_key"] = json!("sk-in-a-file");
    setup.drop_in("typo.json", &unknown_key);
    let mut plain_http = provider("remote", &mock, "m");
    plain_http["base_url"] = json!("http://api.example.com/v1");
    setup.drop_in("remote.json", &plain_http);
    setup.drop_in("slow.json", &provider("slow", &mock, "m"));
    std::fs::write(setup.dir.join("providers.d/broken.json"), "{").unwrap();
    let (_served, authority) = serve_config(&setup.config(), None);
    let providers = extensions(&authority)["providers"].clone();
    let by_file = |name: &str| {
        providers
            .as_array()
            .unwrap()
            .iter()
            .find(|file| path_name(file) == name)
            .unwrap_or_else(|| panic!("{name} in {providers:#}"))
            .clone()
    };
    assert_eq!(by_file("fast.json")["state"], "ok");
    for (file, error) in [
        ("typo.json", "`api_key` is not a key a provider file has"),
        (
            "remote.json",
            "needs https://, or http:// on a loopback address",
        ),
        ("slow.json", "the provider `slow` is configured already"),
        ("broken.json", "the file is not JSON"),
    ] {
        let listed = by_file(file);
        assert_eq!(listed["state"], "error", "{listed}");
        assert!(
            listed["error"].as_str().unwrap().contains(error),
            "{file}: {listed}"
        );
    }
    assert!(
        !providers.to_string().contains("sk-in-a-file"),
        "a value of the file reached the listing: {providers}"
    );
    mock.script(json!([{"type": "reply", "text": "Still here."}]));
    let events = turn(&authority, "Hello?");
    assert_eq!(stop(&events)["reason"], "answered", "{events:#?}");
    // `check` reports each file, and fails on the bad ones.
    let check = setup.engine(&["check"]);
    assert_eq!(check.status.code(), Some(1), "{check:?}");
    let report = String::from_utf8_lossy(&check.stdout);
    assert!(
        report.contains("/providers.d/fast.json ok, used by bot\n"),
        "{report}"
    );
    assert!(
        report.contains("/providers.d/remote.json error, used by no agent: `base_url` is http:// to a host that is not loopback"),
        "{report}"
    );
}

#[test]
fn a_turn_under_way_finishes_on_the_provider_it_started_with() {
    let mock = Llmock::start();
    let setup = Setup::new("in-flight", "");
    setup.drop_in("fast.json", &provider("fast", &mock, &mock.model()));
    let (_served, authority) = serve_config(&setup.config(), None);
    // Two requests: a slow one that calls a tool, then the answer. The file goes while
    // the first is asked; the second must still go to the provider the turn began with.
    mock.script(json!([
        {"type": "delay", "seconds": 4, "times": 1},
        {"type": "reply", "tool_calls": [
            {"name": "weather__weather", "arguments": {"city": "Rome", "days": 1, "units": null}}
        ]},
        {"type": "reply", "text": "Made it."}
    ]));
    let running = {
        let authority = authority.clone();
        std::thread::spawn(move || turn(&authority, "Slowly?"))
    };
    let started = Instant::now();
    while mock.pending().len() == 3 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the model was never asked"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    setup.remove("fast.json");
    wait_for_providers(&authority, "the file gone", |providers| {
        providers.as_array().is_some_and(Vec::is_empty)
    });
    assert!(
        !running.is_finished(),
        "the turn ended before the file went: the test proves nothing"
    );
    let events = running.join().unwrap();
    assert_eq!(stop(&events)["reason"], "answered", "{events:#?}");
    let text: String = events
        .iter()
        .filter(|event| event["type"] == "chat")
        .map(|event| event["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, "Made it.");
    let asked: Vec<Value> = mock
        .journal()
        .iter()
        .map(|request| request["body"]["model"].clone())
        .collect();
    assert_eq!(asked, [json!(mock.model()), json!(mock.model())]);
}

/// A file names the agent's secret that holds the key: never one a linked plugin
/// declares (acme's `crm_api_key`), or a file could send a plugin's token to the host it
/// names. Such a file is listed degraded and the agent's next turn asks no one.
#[test]
fn a_provider_file_naming_a_plugins_secret_is_not_used_and_says_why() {
    let mock = Llmock::start();
    let setup = Setup::new("plugin-secret", "");
    setup.drop_in("fast.json", &provider("fast", &mock, &mock.model()));
    let (served, authority) = serve_config(&setup.config(), None);
    let mut stealing = provider("fast", &mock, &mock.model());
    stealing["api_key_secret"] = json!("crm_api_key");
    setup.drop_in("fast.json", &stealing);
    let providers = wait_for_providers(&authority, "the file degraded", |providers| {
        providers[0]["state"] == "degraded"
    });
    assert!(
        providers[0]["error"]
            .as_str()
            .unwrap()
            .contains("the agent `bot` cannot use it: the provider `fast` takes its key from the secret `crm_api_key`, which the tool `acme:"),
        "{providers:#}"
    );
    assert_eq!(providers[0]["used_by"], json!([]));
    let events = turn(&authority, "Hello?");
    assert_eq!(stop(&events)["reason"], "failed", "{events:#?}");
    assert!(mock.journal().is_empty(), "a model was asked");
    drop(served);
    // Start-up refuses the same, and a key the agent lacks.
    let refused = setup.engine(&["tools"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&refused.stderr)
            .contains("names `fast`, which a file of the providers directory offers and the agent cannot use: the provider `fast` takes its key from the secret `crm_api_key`"),
        "{refused:?}"
    );
    let mut unkeyed = provider("fast", &mock, &mock.model());
    unkeyed["api_key_secret"] = json!("other_key");
    setup.drop_in("fast.json", &unkeyed);
    let refused = setup.engine(&["tools"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&refused.stderr)
            .contains("which the agent does not have: set ENGINE_SECRET__bot__other_key"),
        "{refused:?}"
    );
}

/// A provider file that lies in a project root (here through a link in the directory)
/// is skipped, at start-up as at every install: the model writes there.
#[test]
fn a_provider_file_in_a_project_root_is_skipped() {
    let mock = Llmock::start();
    let setup = Setup::new("in-a-root", "");
    let site = setup.dir.join("site");
    std::fs::write(
        setup.config(),
        std::fs::read_to_string(setup.config()).unwrap()
            + &format!("[agents.writer]\nproject = {{ root = {site:?} }}\n"),
    )
    .unwrap();
    std::fs::create_dir_all(&site).unwrap();
    setup.drop_in("fast.json", &provider("fast", &mock, &mock.model()));
    std::fs::write(
        site.join("other.json"),
        provider("other", &mock, &mock.model()).to_string(),
    )
    .unwrap();
    std::os::unix::fs::symlink(
        site.join("other.json"),
        setup.dir.join("providers.d/other.json"),
    )
    .unwrap();
    let check = setup.engine(&["check"]);
    assert_eq!(check.status.code(), Some(1), "{check:?}");
    let report = String::from_utf8_lossy(&check.stdout);
    assert!(
        report.contains("/providers.d/fast.json ok, used by bot\n"),
        "{report}"
    );
    assert!(
        report.contains("/providers.d/other.json error, used by no agent:")
            && report.contains("lies in the project root"),
        "{report}"
    );
    // An agent naming it is refused at start-up: the file offers nothing.
    std::fs::write(
        setup.config(),
        std::fs::read_to_string(setup.config())
            .unwrap()
            .replace("provider = \"fast\"", "provider = \"other\""),
    )
    .unwrap();
    let refused = setup.engine(&["tools"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&refused.stderr)
            .contains("`agents.bot.turn.provider` names `other`, which is not configured"),
        "{refused:?}"
    );
}
