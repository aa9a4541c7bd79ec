//! External tools: command tools (Python and shell) and MCP servers (the official Python
//! SDK's, over stdio and streamable HTTP) dropped into `tools.d/`, through the example
//! engine's commands and `engine serve`, reloaded while it runs.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use test_support::mcp::run_client;

const ENGINE: &str = env!("CARGO_BIN_EXE_engine");

/// A test file (`tests/extensions/`), or a template the repository ships
/// (`examples/extensions/`), which the tests use as they are.
fn fixture(name: &str) -> PathBuf {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let test_file = manifest_dir.join("tests/extensions").join(name);
    if test_file.exists() {
        test_file
    } else {
        manifest_dir.join("../extensions").join(name)
    }
}

/// A configuration file and its `tools.d/`, in a directory of the test's own.
struct Setup {
    dir: PathBuf,
}

impl Setup {
    fn new(test: &str, config: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("engine-extensions-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("tools.d")).unwrap();
        std::fs::write(dir.join("engine.toml"), config).unwrap();
        // `python3` is the venv's (the MCP server needs its `mcp`), whatever else PATH has.
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        // A script, not a link: Python finds its venv from the path it was started by.
        let python = test_support::python("the extension tests need the venv's Python");
        let wrapper = dir.join("bin/python3");
        std::fs::write(
            &wrapper,
            format!("#!/bin/sh\nexec '{}' \"$@\"\n", python.display()),
        )
        .unwrap();
        std::fs::set_permissions(
            &wrapper,
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        Self { dir }
    }

    fn tools_d(&self) -> PathBuf {
        self.dir.join("tools.d")
    }

    /// Copies fixtures into `tools.d/`.
    fn add(&self, names: &[&str]) -> &Self {
        for name in names {
            std::fs::copy(fixture(name), self.tools_d().join(name)).unwrap();
        }
        self
    }

    fn write(&self, name: &str, text: &str) -> &Self {
        std::fs::write(self.tools_d().join(name), text).unwrap();
        self
    }

    /// The example engine with this configuration, in an environment of PATH alone (the
    /// commands it runs need a shell and Python).
    fn engine(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("the engine runs")
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(ENGINE);
        command
            .env_clear()
            .env("PATH", self.path())
            .arg("--config")
            .arg(self.dir.join("engine.toml"))
            .args(args);
        command
    }

    /// [`command`](Self::command), run from the test's directory with the configuration
    /// named relative to it (`--config engine.toml`).
    fn command_from_its_directory(&self, args: &[&str]) -> Command {
        let mut command = Command::new(ENGINE);
        command
            .env_clear()
            .env("PATH", self.path())
            .current_dir(&self.dir)
            .args(["--config", "engine.toml"])
            .args(args);
        command
    }

    /// `engine call TOOL ARGUMENTS`, its output parsed.
    fn call(&self, tool: &str, arguments: &str) -> Value {
        let output = self.engine(&["call", tool, arguments]);
        serde_json::from_slice(&output.stdout)
            .unwrap_or_else(|_| panic!("JSON from the call: {output:?}"))
    }

    /// PATH, with the test's `bin/` (its `python3`) first.
    fn path(&self) -> String {
        let bin = self.dir.join("bin");
        format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        )
    }

    /// `engine serve` on a free port, with `extra` arguments; answers the served engine,
    /// whose stderr is read from the start (a full pipe would stop it).
    fn serve(&self, extra: &[&str]) -> Served {
        Self::spawn_served(self.command(&["serve", "--addr", "127.0.0.1:0"]), extra)
    }

    fn spawn_served(mut command: Command, extra: &[&str]) -> Served {
        let mut child = command
            .args(extra)
            // The watcher's every event, for the tests that wait on what it saw.
            .env("RUST_LOG", "info,engine_extensions=debug")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the engine starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(line.starts_with("http://127.0.0.1:"), "not a URL: {line:?}");
        let url = line.trim().trim_end_matches("/mcp").to_owned();
        let log = Arc::new(Mutex::new(String::new()));
        let reader = BufReader::new(child.stderr.take().unwrap());
        let lines = Arc::clone(&log);
        let stderr = std::thread::spawn(move || {
            for line in reader.lines().map_while(Result::ok) {
                let mut log = lines.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        });
        Served {
            child,
            url,
            log,
            stderr: Some(stderr),
        }
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

struct Served {
    child: Child,
    url: String,
    /// What it wrote to stderr so far (its log), read as it is written.
    log: Arc<Mutex<String>>,
    stderr: Option<std::thread::JoinHandle<()>>,
}

impl Served {
    /// `GET /v1/extensions`, parsed.
    fn extensions(&self) -> Value {
        serde_json::from_str(&http_get(&self.url, "/v1/extensions")).expect("JSON")
    }

    /// Waits until `/v1/extensions` satisfies `ready` (a reload is asynchronous).
    fn wait_for(&self, what: &str, ready: impl Fn(&Value) -> bool) -> Value {
        let start = Instant::now();
        loop {
            let extensions = self.extensions();
            if ready(&extensions) {
                return extensions;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "{what}: {extensions:#}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn mcp(&self) -> Value {
        json!({ "url": format!("{}/mcp", self.url) })
    }

    /// Its log so far.
    fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// Waits until its log satisfies `ready`; answers the log.
    fn wait_for_log(&self, what: &str, ready: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let log = self.log();
            if ready(&log) {
                return log;
            }
            assert!(start.elapsed() < Duration::from_secs(20), "{what}: {log}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Stops it as an operator would (SIGINT: a graceful shutdown, which stops the MCP
    /// servers it started), and answers everything it wrote to stderr.
    fn stop(mut self) -> String {
        interrupt_and_wait(&mut self.child);
        let _ = self.stderr.take().unwrap().join();
        self.log()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        interrupt_and_wait(&mut self.child);
    }
}

/// SIGINT, then SIGKILL if it has not exited within ten seconds.
fn interrupt_and_wait(child: &mut Child) {
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// A plain HTTP/1.1 GET; answers the body.
fn http_get(base: &str, path: &str) -> String {
    let host = base.trim_start_matches("http://");
    let mut stream = TcpStream::connect(host).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    response.split_once("\r\n\r\n").unwrap().1.to_owned()
}

/// The ids of the tools `/v1/extensions` lists.
fn ids(extensions: &Value) -> Vec<&str> {
    extensions["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["id"].as_str().unwrap())
        .collect()
}

/// The file entry of `/v1/extensions` for `name`.
fn file<'a>(extensions: &'a Value, name: &str) -> &'a Value {
    extensions["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|file| file["path"].as_str().unwrap().ends_with(name))
        .unwrap_or_else(|| panic!("{name} in {extensions:#}"))
}

fn is_alive(pid: &str) -> bool {
    // Reaped or not, a process that is gone has no `status` line saying it runs.
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .is_ok_and(|status| !status.contains("State:\tZ"))
}

const AGENT: &str = "[agents.default]\n";

#[test]
fn command_tools_in_python_and_shell_are_called_and_rendered_like_linked_ones() {
    let setup = Setup::new("commands", AGENT);
    setup.add(&["word_count.json", "word_count.py", "shout.json", "shout.sh"]);
    assert_eq!(
        setup.call("local__word_count", r#"{"text": "one two three"}"#),
        json!({"words": 3})
    );
    assert_eq!(
        setup.call("shell:shout", r#"{"text": "hi"}"#),
        json!({"shouted": {"TEXT": "HI"}})
    );
    let output = setup.engine(&["catalog", "--format", "openai"]);
    let catalog: Value = serde_json::from_slice(&output.stdout).unwrap();
    let entry = |name: &str| {
        catalog
            .as_array()
            .unwrap()
            .iter()
            .find(|tool| tool["function"]["name"] == name)
            .unwrap_or_else(|| panic!("{name} in the catalog"))
            .clone()
    };
    // A strict-compatible schema is offered strict, as written; an open one, not strict.
    let word_count = entry("local__word_count");
    assert_eq!(word_count["function"]["strict"], true);
    assert_eq!(
        word_count["function"]["parameters"],
        serde_json::from_str::<Value>(
            &std::fs::read_to_string(fixture("word_count.json")).unwrap()
        )
        .unwrap()["input_schema"]
    );
    assert_eq!(entry("shell__shout")["function"]["strict"], false);
    for format in ["anthropic", "gemini", "mcp"] {
        let output = setup.engine(&["catalog", "--format", format]);
        let text = String::from_utf8(output.stdout).unwrap();
        serde_json::from_str::<Value>(&text).expect("every catalog stays JSON");
        assert!(
            text.contains("local__word_count") && text.contains("shell__shout"),
            "{format}: {text}"
        );
    }
    let tools = String::from_utf8(setup.engine(&["tools"]).stdout).unwrap();
    assert!(
        tools.contains("local:word_count             [Text] Count words"),
        "{tools}"
    );
    assert!(
        tools.contains("not strict-compatible (rendered `strict: false`)"),
        "{tools}"
    );
    assert!(
        tools.contains("equips external: local:word_count, shell:shout"),
        "{tools}"
    );
}

#[test]
fn arguments_that_do_not_fit_the_schema_are_refused_before_the_command_runs() {
    let setup = Setup::new("arguments", AGENT);
    setup.add(&["shout.json", "shout.sh"]);
    let refused = setup.call("shell__shout", r#"{"text": 42}"#);
    assert_eq!(refused["error"]["kind"], "invalid_arguments", "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("at `/text`"),
        "{refused}"
    );
    let not_json = setup.call("shell__shout", "{");
    assert_eq!(not_json["error"]["kind"], "invalid_arguments", "{not_json}");
    assert!(
        !setup.tools_d().join("ran.marker").exists(),
        "the command ran"
    );
    setup.call("shell__shout", r#"{"text": "x"}"#);
    assert!(
        setup.tools_d().join("ran.marker").exists(),
        "the command never ran"
    );
}

#[test]
fn a_hanging_command_is_stopped_at_its_timeout_with_everything_it_started() {
    let setup = Setup::new("hang", AGENT);
    setup.add(&["hang.json", "hang.sh"]);
    let pid_file = setup.tools_d().join("helper.pid");
    let _helper = KillOnDrop(pid_file.clone());
    let stopped = setup.call("local__hang", "{}");
    assert_eq!(stopped["error"]["kind"], "timed_out", "{stopped}");
    let message = stopped["error"]["message"].as_str().unwrap();
    assert!(message.contains("timeout of 3 s"), "{stopped}");
    let helper = std::fs::read_to_string(&pid_file).expect("the helper was started");
    let helper = helper.trim();
    let deadline = Instant::now() + Duration::from_secs(5);
    while is_alive(helper) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !is_alive(helper),
        "the background helper {helper} survived its group's stop"
    );
}

/// Kills the process whose pid the file holds, if a failing test left it. Only then:
/// once the test saw it gone, its pid may be another process's (pids wrap at 32,768 on
/// the CI's machines).
struct KillOnDrop(PathBuf);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            return;
        }
        if let Ok(pid) = std::fs::read_to_string(&self.0) {
            let _ = Command::new("kill").args(["-KILL", pid.trim()]).status();
        }
    }
}

#[test]
fn a_command_that_floods_stdout_is_cut_at_the_cap() {
    let setup = Setup::new(
        "flood",
        "[extensions]\nmax_output_bytes = 65536\n[agents.default]\n",
    );
    setup.add(&["flood.json"]);
    let cut = setup.call("local__flood", "{}");
    assert_eq!(cut["error"]["kind"], "output", "{cut}");
    assert!(
        cut["error"]["message"]
            .as_str()
            .unwrap()
            .contains("more than 65536 bytes"),
        "{cut}"
    );
}

#[test]
fn a_failing_command_gives_the_last_lines_of_its_stderr_redacted() {
    let setup = Setup::new(
        "fail",
        "[extensions]\nsecrets = { crm = \"hush-hush-key-1234\" }\n[agents.default]\n",
    );
    setup.add(&["fail.json"]);
    let failed = setup.call("local__fail", "{}");
    assert_eq!(failed["error"]["kind"], "failed", "{failed}");
    let message = failed["error"]["message"].as_str().unwrap();
    assert!(message.contains("exited with status 2"), "{message}");
    assert!(
        message.contains("line 5 | line 6 | line 7 | line 8"),
        "{message}"
    );
    assert!(
        !message.contains("line 4"),
        "more than the last lines: {message}"
    );
    assert!(
        !message.contains("hush-hush-key-1234"),
        "the secret leaked: {message}"
    );
    assert!(message.contains("the key was"), "{message}");
}

#[test]
fn broken_files_and_clashes_are_skipped_with_their_errors_beside_good_ones() {
    let setup = Setup::new("broken", AGENT);
    setup.add(&["word_count.json", "word_count.py"]);
    let tool = |namespace: &str, name: &str, schema: &str| {
        format!(
            r#"{{"namespace": "{namespace}", "name": "{name}", "description": "d", "input_schema": {schema}, "command": ["true"]}}"#
        )
    };
    let object = r#"{"type": "object"}"#;
    setup
        .write("a_truncated.json", r#"{"name": "half""#)
        .write("b_bad_schema.json", &tool("local", "bad", r#"{"type": "object", "properties": {"a": {"type": "strin"}}}"#))
        .write("c_linked.json", &tool("acme", "extra", object))
        .write("d_builtin_name.json", &tool("local", "list_files", object))
        .write("e_reserved.json", &tool("builtin", "mine", object))
        .write("z_twice.json", &tool("local", "word_count", object))
        .write("g_typo.json", r#"{"name": "t", "description": "d", "input_schema": {}, "command": ["true"], "timeout": 3}"#);
    let check = setup.engine(&["check"]);
    assert_eq!(check.status.code(), Some(1), "{check:?}");
    let report = String::from_utf8(check.stdout).unwrap();
    for expected in [
        "a_truncated.json skipped, 0 tools: the file is not JSON",
        "b_bad_schema.json skipped, 0 tools: its input schema is not a valid JSON Schema",
        "c_linked.json skipped, 0 tools: the namespace `acme` belongs to the linked plugin `acme-crm`",
        "d_builtin_name.json skipped, 0 tools: `local:list_files`: `list_files` is the name of a built-in tool",
        "e_reserved.json skipped, 0 tools: the namespace `builtin` is kept for the engine",
        "z_twice.json skipped, 0 tools: `local:word_count` is already defined by",
        "g_typo.json skipped, 0 tools: the file is not a command tool description: unknown field `timeout`",
        "word_count.json loaded, 1 tools",
    ] {
        assert!(report.contains(expected), "{expected}\nin:\n{report}");
    }
    // The log says it too, and the good file works.
    let stderr = String::from_utf8(setup.engine(&["tools"]).stderr).unwrap();
    assert!(
        stderr.contains("c_linked.json") && stderr.contains("skipped"),
        "{stderr}"
    );
    assert_eq!(
        setup.call("local__word_count", r#"{"text": "a b"}"#),
        json!({"words": 2})
    );
}

#[test]
fn engine_serve_reloads_added_changed_and_removed_files_and_tells_mcp_clients() {
    let setup = Setup::new("reload", AGENT);
    setup.add(&["word_count.py", "shout.sh"]);
    let served = setup.serve(&[]);
    assert_eq!(
        served.extensions(),
        json!({"files": [], "tools": [], "providers": []})
    );
    let manifest = std::fs::read_to_string(fixture("word_count.json")).unwrap();
    let added = run_client(json!({
        "server": served.mcp(),
        "steps": [
            { "listen_tools_changed": { "write": setup.tools_d().join("word_count.json"), "text": manifest } },
            { "call": "local__word_count", "arguments": { "text": "a b c d" } },
        ]
    }));
    assert_eq!(added["steps"][0]["changed"], true, "{added}");
    assert!(
        added["steps"][0]["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("local__word_count")),
        "{added}"
    );
    assert_eq!(
        added["steps"][1]["structuredContent"],
        json!({"words": 4}),
        "{added}"
    );
    // Changed: the next listing has the new description.
    setup.write(
        "word_count.json",
        &manifest.replace("Counts the words of a text.", "Counts words."),
    );
    served.wait_for("the edit", |extensions| {
        extensions["tools"][0]["description"] == "Counts words."
    });
    let listed = run_client(json!({"server": served.mcp(), "steps": [{"list_tools": {}}]}));
    let tools = listed["steps"][0]["tools"].as_array().unwrap();
    let entry = tools
        .iter()
        .find(|tool| tool["name"] == "local__word_count")
        .unwrap();
    assert_eq!(entry["description"], "Counts words.", "{entry}");
    // Removed: gone from the list, and unknown to a call.
    let removed = run_client(json!({
        "server": served.mcp(),
        "steps": [
            { "listen_tools_changed": { "write": setup.tools_d().join("word_count.json"), "text": null } },
            { "call": "local__word_count", "arguments": { "text": "a" } },
        ]
    }));
    assert!(
        !removed["steps"][0]["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("local__word_count")),
        "{removed}"
    );
    let answer = removed["steps"][1].to_string();
    assert!(
        answer.contains("there is no tool named `local__word_count`"),
        "{answer}"
    );
    // A new file that clashes with a working one is the one skipped, even first in path
    // order: dropping a file in never takes a working tool away.
    setup.add(&["word_count.json"]);
    served.wait_for("the file back", |extensions| {
        ids(extensions) == ["local:word_count"]
    });
    setup.write("a_clash.json", &manifest);
    let extensions = served.wait_for("the clash", |extensions| {
        extensions["files"].as_array().unwrap().len() == 2
    });
    assert_eq!(
        file(&extensions, "a_clash.json")["state"],
        "skipped",
        "{extensions:#}"
    );
    assert_eq!(
        file(&extensions, "word_count.json")["state"],
        "loaded",
        "{extensions:#}"
    );
    std::fs::remove_file(setup.tools_d().join("a_clash.json")).unwrap();
    std::fs::remove_file(setup.tools_d().join("word_count.json")).unwrap();
    served.wait_for("both gone", |extensions| {
        extensions["files"].as_array().unwrap().is_empty()
    });
    // A broken file shows in /v1/extensions with its error; the server keeps serving.
    setup.write("broken.json", "{");
    let extensions = served.wait_for("the broken file", |extensions| {
        extensions["files"].as_array().unwrap().len() == 1
    });
    let broken = file(&extensions, "broken.json");
    assert_eq!(broken["state"], "skipped");
    assert_eq!(broken["kind"], "unknown");
    assert!(
        broken["error"].as_str().unwrap().contains("not JSON"),
        "{broken}"
    );
    let stderr = served.stop();
    assert!(stderr.contains("extensions reloaded"), "{stderr}");
}

#[test]
fn a_reload_does_not_hear_its_own_reads_of_the_files_as_a_change() {
    let setup = Setup::new("own-reads", AGENT);
    setup.add(&["word_count.json", "word_count.py"]);
    let served = setup.serve(&[]);
    served.wait_for("the first read", |extensions| {
        extensions["tools"][0]["description"] == "Counts the words of a text."
    });
    let before_edit = served.log().len();
    let manifest = std::fs::read_to_string(fixture("word_count.json")).unwrap();
    setup.write(
        "word_count.json",
        &manifest.replace("Counts the words of a text.", "Counts words."),
    );
    served.wait_for("the reload of the edit", |extensions| {
        extensions["tools"][0]["description"] == "Counts words."
    });
    // The reload opened and read word_count.json. A barrier, as in the SIGHUP test: once
    // the watcher logged it, it had heard of those reads, and said whether each asks for
    // a reload. None may: each reload would then ask for the next, for ever.
    setup.write("barrier.txt", "");
    let log = served.wait_for_log("the watcher's event for the barrier", |log| {
        log[before_edit..].contains("barrier.txt")
    });
    let since_edit =
        &log[before_edit..before_edit + log[before_edit..].find("barrier.txt").unwrap()];
    let heard: Vec<&str> = since_edit
        .lines()
        .filter(|line| line.contains("relevant=true"))
        .collect();
    assert!(
        !heard.is_empty(),
        "the edit itself was not heard: {since_edit}"
    );
    for line in &heard {
        assert!(
            [
                "kind=Create(",
                "kind=Modify(Data(",
                "kind=Modify(Name(",
                "kind=Remove("
            ]
            .iter()
            .any(|kind| line.contains(kind)),
            "an event that changes no file asked for a reload: {line}"
        );
    }
    assert_eq!(
        since_edit.matches("extensions reloaded").count(),
        1,
        "one edit, one reload: {since_edit}"
    );
}

#[test]
fn with_a_relative_config_a_tools_d_made_after_start_up_is_loaded() {
    let setup = Setup::new("relative-config", AGENT);
    std::fs::remove_dir_all(setup.tools_d()).unwrap();
    let served = Setup::spawn_served(
        setup.command_from_its_directory(&["serve", "--addr", "127.0.0.1:0"]),
        &[],
    );
    assert!(ids(&served.extensions()).is_empty());
    std::fs::create_dir(setup.tools_d()).unwrap();
    setup.add(&["word_count.py", "word_count.json"]);
    served.wait_for("the directory made after start-up", |extensions| {
        ids(extensions) == ["local:word_count"]
    });
}

#[test]
fn sighup_reloads_the_directory_and_the_engine_keeps_serving() {
    let setup = Setup::new("sighup", AGENT);
    setup.add(&["word_count.py"]);
    // The file in tools.d/ is a link to one outside it: editing the target changes
    // nothing the watcher sees, so only SIGHUP can pick the edit up.
    let outside = setup.dir.join("word_count.json");
    let manifest = std::fs::read_to_string(fixture("word_count.json")).unwrap();
    std::fs::write(&outside, &manifest).unwrap();
    std::os::unix::fs::symlink(&outside, setup.tools_d().join("word_count.json")).unwrap();
    let served = setup.serve(&[]);
    served.wait_for("the first read", |extensions| {
        extensions["tools"][0]["description"] == "Counts the words of a text."
    });
    let before_edit = served.log().len();
    std::fs::write(
        &outside,
        manifest.replace("Counts the words of a text.", "Counts words."),
    )
    .unwrap();
    // A barrier: a file the watcher hears of but does not reload for. It hears of
    // changes in order and logs each as it hears of it (a reload follows by the settling
    // time), so once it logged the barrier it had whatever the edit outside could have
    // told it, and said whether that asked for a reload.
    std::fs::write(setup.tools_d().join("barrier.txt"), "").unwrap();
    let log = served.wait_for_log("the watcher's event for the barrier", |log| {
        log.contains("barrier.txt")
    });
    let since_edit = &log[before_edit..log.find("barrier.txt").unwrap()];
    assert!(
        !since_edit.contains("relevant=true") && !since_edit.contains("extensions reloaded"),
        "the watcher saw an edit outside the directory: {since_edit}"
    );
    assert_eq!(
        served.extensions()["tools"][0]["description"],
        "Counts the words of a text.",
        "the watcher saw an edit outside the directory"
    );
    let pid = served.child.id().to_string();
    assert!(Command::new("kill")
        .args(["-HUP", &pid])
        .status()
        .unwrap()
        .success());
    served.wait_for("the reload on SIGHUP", |extensions| {
        extensions["tools"][0]["description"] == "Counts words."
    });
    let stderr = served.stop();
    assert!(
        stderr.contains("SIGHUP: reloading the extensions"),
        "{stderr}"
    );
}

#[test]
fn a_call_in_flight_during_a_reload_finishes_on_the_set_it_started_with() {
    let setup = Setup::new("in-flight", AGENT);
    setup.add(&["slow.json"]);
    let served = setup.serve(&[]);
    served.wait_for("the first read", |extensions| {
        ids(extensions) == ["local:slow"]
    });
    let mcp = served.mcp();
    let call = std::thread::spawn(move || {
        run_client(json!({"server": mcp, "steps": [{"call": "local__slow", "arguments": {}}]}))
    });
    // The command notes when it starts; the file goes while it runs.
    let started = setup.tools_d().join("slow.started");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !started.exists() {
        assert!(Instant::now() < deadline, "the call never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::fs::remove_file(setup.tools_d().join("slow.json")).unwrap();
    served.wait_for("the removal", |extensions| ids(extensions).is_empty());
    // Only now may the command answer: the call runs across the swap.
    std::fs::write(setup.tools_d().join("release"), "").unwrap();
    let finished = call.join().unwrap();
    assert_eq!(
        finished["steps"][0]["structuredContent"],
        json!({"slow": true}),
        "{finished}"
    );
    let after = run_client(
        json!({"server": served.mcp(), "steps": [{"call": "local__slow", "arguments": {}}]}),
    );
    let answer = after["steps"][0].to_string();
    assert!(
        answer.contains("there is no tool named `local__slow`"),
        "{answer}"
    );
}

/// The extension file of the test MCP server over stdio, in the namespace `jot`.
fn stdio_server(setup: &Setup) {
    for (from, to) in [
        ("mcp_server.py", "mcp_server.py"),
        ("mcp-server.json", "jot.json"),
    ] {
        std::fs::copy(fixture(from), setup.tools_d().join(to)).unwrap();
    }
}

#[test]
fn an_mcp_server_over_stdio_is_listed_called_followed_restarted_and_replaced() {
    let setup = Setup::new(
        "mcp-stdio",
        "[extensions]\nsecrets = { key = \"hush-hush-key-1234\" }\n[agents.default]\n",
    );
    std::fs::copy(
        fixture("mcp_server.py"),
        setup.tools_d().join("mcp_server.py"),
    )
    .unwrap();
    let served = setup.serve(&[]);
    assert_eq!(served.extensions()["files"], json!([]));
    // Added while serving.
    std::fs::copy(fixture("mcp-server.json"), setup.tools_d().join("jot.json")).unwrap();
    let extensions = served.wait_for("the server's tools", |extensions| {
        ids(extensions).contains(&"jot:echo")
    });
    assert_eq!(
        ids(&extensions),
        ["jot:crash", "jot:echo", "jot:grow", "jot:sleep"]
    );
    assert_eq!(file(&extensions, "jot.json")["kind"], "mcp_server");
    let first = server_pids(&setup);
    assert_eq!(first.len(), 1, "one server process: {first:?}");
    let report = run_client(json!({
        "server": served.mcp(),
        "steps": [
            { "call": "jot__echo", "arguments": { "text": "hello" } },
            // The server adds a tool and says so: the engine lists its tools again.
            { "call": "jot__grow", "arguments": { "name": "fresh" } },
        ]
    }));
    assert_eq!(
        report["steps"][0]["structuredContent"],
        json!({"result": "hello"}),
        "{report}"
    );
    served.wait_for("the grown tool", |extensions| {
        ids(extensions).contains(&"jot:fresh")
    });
    // A linked tool keeps answering while the server crashes and restarts.
    let crashed = run_client(json!({
        "server": served.mcp(),
        "steps": [
            { "call": "jot__crash", "arguments": {} },
            { "call": "weather__weather", "arguments": { "city": "Rome", "days": 1, "units": null } },
            { "poll": "jot__echo", "arguments": { "text": "back" }, "until": { "result": "back" }, "timeout_ms": 20000 },
        ]
    }));
    let error = crashed["steps"][0].to_string();
    assert!(error.contains("failed"), "{error}");
    assert_eq!(crashed["steps"][1]["isError"], false, "{crashed}");
    assert_eq!(
        crashed["steps"][2]["structuredContent"],
        json!({"result": "back"}),
        "{crashed}"
    );
    let restarted = server_pids(&setup);
    assert_eq!(restarted.len(), 1, "{restarted:?}");
    assert_ne!(restarted, first, "the crashed server was not replaced");
    // Rewritten as it was: the same server. Edited: a new one, and the old one stops.
    let before_copy = served.log().len();
    std::fs::copy(fixture("mcp-server.json"), setup.tools_d().join("jot.json")).unwrap();
    // A reload logged after the watcher heard of the rewrite (not one a server's restart
    // asked for before it) read the rewritten file.
    served.wait_for_log("the reload of the rewritten file", |log| {
        log[before_copy..]
            .lines()
            .skip_while(|line| {
                !(line.contains("extensions watcher: event") && line.contains("jot.json"))
            })
            .any(|line| line.contains("extensions reloaded"))
    });
    assert_eq!(
        server_pids(&setup),
        restarted,
        "an unchanged file restarted its server"
    );
    let edited = std::fs::read_to_string(fixture("mcp-server.json"))
        .unwrap()
        .replace("\"mcp_server.py\"", "\"mcp_server.py\", \"--edited\"");
    setup.write("jot.json", &edited);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let now = server_pids(&setup);
        if now.len() == 1 && now != restarted {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the edit did not replace the server: {now:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let stderr = served.stop();
    assert!(
        stderr.contains("the MCP server stopped; it is being restarted"),
        "{stderr}"
    );
    // The server's stderr is in the log, with the configured secret redacted.
    assert!(stderr.contains("starting; the key is"), "{stderr}");
    assert!(!stderr.contains("hush-hush-key-1234"), "{stderr}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !server_pids(&setup).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        server_pids(&setup),
        Vec::<u32>::new(),
        "a server outlived the engine"
    );
}

#[test]
fn a_hanging_mcp_call_times_out_and_the_server_goes_with_its_file() {
    let setup = Setup::new("mcp-hang", "[agents.default]\n");
    stdio_server(&setup);
    let served = setup.serve(&["--timeout-ms", "1000"]);
    served.wait_for("the server's tools", |extensions| {
        ids(extensions).contains(&"jot:echo")
    });
    let hung = run_client(json!({
        "server": served.mcp(),
        "steps": [
            { "call": "jot__sleep", "arguments": { "seconds": 60 } },
            { "call": "jot__echo", "arguments": { "text": "still here" } },
        ]
    }));
    let answer = hung["steps"][0].to_string();
    assert!(answer.contains("did not finish in time"), "{answer}");
    assert_eq!(
        hung["steps"][1]["structuredContent"],
        json!({"result": "still here"}),
        "{hung}"
    );
    // Removed while served: its tools go, and so does its process.
    assert_eq!(
        server_pids(&setup).len(),
        1,
        "the server runs before the removal"
    );
    std::fs::remove_file(setup.tools_d().join("jot.json")).unwrap();
    served.wait_for("the removal", |extensions| ids(extensions).is_empty());
    let deadline = Instant::now() + Duration::from_secs(10);
    while !server_pids(&setup).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        server_pids(&setup),
        Vec::<u32>::new(),
        "the MCP server outlived its file"
    );
}

/// The processes that run the test's copy of the MCP server (`python3 mcp_server.py`
/// in its `tools.d/`), sorted.
fn server_pids(setup: &Setup) -> Vec<u32> {
    let tools_d = setup.tools_d().canonicalize().unwrap();
    let mut pids: Vec<u32> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| entry.ok())
        .filter(|entry| {
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            let runs_it = String::from_utf8_lossy(&cmdline).contains("mcp_server.py");
            let here = std::fs::read_link(entry.path().join("cwd")).is_ok_and(|dir| dir == tools_d);
            runs_it && here
        })
        .filter_map(|entry| entry.file_name().to_str()?.parse().ok())
        .collect();
    pids.sort();
    pids
}

/// Starts the test MCP server over HTTP with the token `the-token-0123`, on `port` or a
/// free one; answers it (killed when dropped) and its port, once it listens.
fn http_server(port: Option<u16>) -> (KillChild, u16) {
    let python = test_support::python("the MCP server needs the venv's Python");
    let mut server = Command::new(python)
        .arg(fixture("mcp_server.py"))
        .args(["--http", "the-token-0123"])
        .args(port.map(|port| port.to_string()))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut port = String::new();
    BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut port)
        .unwrap();
    let server = KillChild(server);
    let port: u16 = port.trim().parse().expect("the server prints its port");
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "the MCP server did not listen");
        std::thread::sleep(Duration::from_millis(50));
    }
    (server, port)
}

/// The shipped HTTP template, pointed at the test server on `port`.
fn http_file(port: u16) -> String {
    let template = std::fs::read_to_string(fixture("mcp-server-http.json")).unwrap();
    template.replace("127.0.0.1:8000", &format!("127.0.0.1:{port}"))
}

#[test]
fn an_mcp_server_over_http_gets_its_token_from_the_secrets() {
    let (_server, port) = http_server(None);
    let file = http_file(port);
    let setup = Setup::new(
        "mcp-http",
        "[extensions]\nsecrets = { remote_token = \"the-token-0123\" }\n[agents.default]\n",
    );
    setup.write("remote.json", &file);
    assert_eq!(
        setup.call("remote__echo", r#"{"text": "over http"}"#),
        json!({"result": "over http"})
    );
    // The wrong token: the file is skipped, and says why.
    let wrong = Setup::new(
        "mcp-http-wrong",
        "[extensions]\nsecrets = { remote_token = \"not-it\" }\n[agents.default]\n",
    );
    wrong.write("remote.json", &file);
    let check = wrong.engine(&["check"]);
    assert_eq!(check.status.code(), Some(1));
    let report = String::from_utf8(check.stdout).unwrap();
    assert!(
        report.contains("remote.json skipped, 0 tools: the MCP server did not start"),
        "{report}"
    );
}

#[test]
fn an_mcp_server_over_http_that_goes_away_fails_its_calls_and_is_used_again_once_back() {
    let (server, port) = http_server(None);
    let setup = Setup::new(
        "mcp-http-restart",
        "[extensions]\nsecrets = { remote_token = \"the-token-0123\" }\n[agents.default]\n",
    );
    setup.write("remote.json", &http_file(port));
    let served = setup.serve(&[]);
    served.wait_for("the server's tools", |extensions| {
        ids(extensions).contains(&"remote:echo")
    });
    let up = run_client(json!({
        "server": served.mcp(),
        "steps": [{ "call": "remote__echo", "arguments": { "text": "up" } }]
    }));
    assert_eq!(
        up["steps"][0]["structuredContent"],
        json!({"result": "up"}),
        "{up}"
    );
    drop(server);
    // Gone: its tool answers an error, and a linked tool keeps answering.
    let down = run_client(json!({
        "server": served.mcp(),
        "steps": [
            { "call": "remote__echo", "arguments": { "text": "down" } },
            { "call": "weather__weather", "arguments": { "city": "Rome", "days": 1, "units": null } },
        ]
    }));
    assert_eq!(down["steps"][0]["isError"], true, "{down}");
    let error = down["steps"][0]["content"][0]["text"].as_str().unwrap();
    // The call fails on the connection, or, once the engine has seen the server go, at
    // once with why.
    assert!(error.contains(r#""kind":"failed""#), "{error}");
    assert!(
        error.contains("failed the call of `echo`")
            || error.contains("the MCP server of `remote` is not available"),
        "{error}"
    );
    assert_eq!(down["steps"][1]["isError"], false, "{down}");
    // Back on the same address: the engine connects again and its tool answers.
    let (_server, _) = http_server(Some(port));
    let back = run_client(json!({
        "server": served.mcp(),
        "steps": [
            { "poll": "remote__echo", "arguments": { "text": "back" }, "until": { "result": "back" }, "timeout_ms": 40000 },
        ]
    }));
    assert_eq!(
        back["steps"][0]["structuredContent"],
        json!({"result": "back"}),
        "{back}"
    );
    drop(served);
}

/// A child process killed when the test ends, passed or not.
struct KillChild(Child);

impl Drop for KillChild {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn each_agent_equips_the_external_tools_its_list_names() {
    let setup = Setup::new(
        "per-agent",
        "[agents.all]\n\
         [agents.listed]\ntools = [\"weather:weather\"]\nexternal_tools = [\"local:word_count\"]\n\
         [agents.namespace]\nexternal_tools = [\"shell:*\"]\n\
         [agents.linked]\ntools = [\"weather:weather\"]\n",
    );
    setup.add(&["word_count.json", "word_count.py", "shout.json", "shout.sh"]);
    let equips = |agent: &str| -> Vec<String> {
        let output = setup.engine(&["--agent", agent, "catalog", "--format", "openai"]);
        let catalog: Value = serde_json::from_slice(&output.stdout).unwrap();
        catalog
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| tool["function"]["name"].as_str().unwrap().to_owned())
            .filter(|name| name.starts_with("local__") || name.starts_with("shell__"))
            .collect()
    };
    assert_eq!(equips("all"), ["local__word_count", "shell__shout"]);
    assert_eq!(equips("listed"), ["local__word_count"]);
    assert_eq!(equips("namespace"), ["shell__shout"]);
    assert!(
        equips("linked").is_empty(),
        "a tools list without external_tools equips none"
    );
    // A tool the agent does not equip is unknown to it, as an unlinked one would be.
    let output = setup.engine(&[
        "--agent",
        "linked",
        "call",
        "local__word_count",
        r#"{"text": "a"}"#,
    ]);
    let refused: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(refused["error"]["kind"], "unknown_tool", "{refused}");
    // external_tools may name tools whose file is not there yet (engine check lists
    // them), but not linked ones; tools still names linked tools only.
    let check = setup.engine(&["config", "check"]);
    assert!(check.status.success(), "{check:?}");
    std::fs::write(
        setup.dir.join("engine.toml"),
        "[agents.a]\ntools = [\"later:tool\"]\nexternal_tools = [\"later:tool\", \"weather:weather\"]\n",
    )
    .unwrap();
    let check = setup.engine(&["config", "check"]);
    let report = String::from_utf8(check.stderr).unwrap();
    assert!(
        report.contains("`agents.a.tools` names `later:tool`, which no linked plugin defines"),
        "{report}"
    );
    assert!(report.contains("`agents.a.external_tools` has `weather:weather`, in `weather`, a namespace of linked tools"), "{report}");
    assert!(
        !report.contains("external_tools` has `later:tool`"),
        "{report}"
    );
    std::fs::write(
        setup.dir.join("engine.toml"),
        "[agents.a]\nexternal_tools = [\"later:tool\"]\n",
    )
    .unwrap();
    let listed = String::from_utf8(setup.engine(&["--agent", "a", "check"]).stdout).unwrap();
    assert!(
        listed.contains("lists later:tool, which no extension file provides"),
        "{listed}"
    );
}

#[test]
fn the_shipped_mcp_server_template_runs_as_the_readme_says() {
    let setup = Setup::new("mcp-template", AGENT);
    let templates = Path::new(env!("CARGO_MANIFEST_DIR")).join("../extensions");
    for name in ["mcp-server.json", "mcp_server.py"] {
        std::fs::copy(templates.join(name), setup.tools_d().join(name)).unwrap();
    }
    assert_eq!(
        setup.call("jot__shout", r#"{"text": "hi"}"#),
        json!({"result": "HI"})
    );
}

/// Issue 31 #1: what the model can write is never what the engine runs. A tool file in
/// a project root (through a link in `tools.d`), or one that names a program there, is
/// skipped with why, and what it names is never started; the others load.
#[test]
fn a_tool_file_or_a_program_in_a_project_root_is_skipped_and_never_started() {
    let setup = Setup::new("in-a-root", "");
    let site = setup.dir.join("site");
    std::fs::create_dir_all(&site).unwrap();
    std::fs::write(
        setup.dir.join("engine.toml"),
        format!("[agents.default]\nproject = {{ root = {site:?} }}\n"),
    )
    .unwrap();
    // What a model could have written with the file tools: a script that leaves a mark.
    let mark = setup.dir.join("ran");
    let script = site.join("run.sh");
    std::fs::write(&script, format!("#!/bin/sh\ntouch {mark:?}\necho '{{}}'\n")).unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let tool = |name: &str, command: &str| {
        format!(
            r#"{{"namespace": "local", "name": "{name}", "description": "d", "input_schema": {{"type": "object"}}, "command": [{command:?}]}}"#
        )
    };
    setup
        .write("absolute.json", &tool("absolute", script.to_str().unwrap()))
        .write("relative.json", &tool("relative", "../site/run.sh"))
        // An interpreter outside, the script it runs inside.
        .write(
            "interpreted.json",
            r#"{"namespace": "local", "name": "interpreted", "description": "d", "input_schema": {"type": "object"}, "command": ["sh", "../site/run.sh"]}"#,
        )
        // The script named bare, through a link beside the file: one to the script, and
        // one to a script the model has yet to write.
        .write(
            "through_link.json",
            r#"{"namespace": "local", "name": "through_link", "description": "d", "input_schema": {"type": "object"}, "command": ["sh", "linked.sh"]}"#,
        )
        // The program through the tool's own working directory, as /proc names it.
        .write("own_cwd.json", &tool("own_cwd", "/proc/self/cwd/../site/run.sh"))
        // A short option with its script glued on, bundled, or a script in a shell line.
        .write(
            "glued.json",
            r#"{"namespace": "local", "name": "glued", "description": "d", "input_schema": {"type": "object"}, "command": ["sed", "-n", "-f../site/run.sh"]}"#,
        )
        .write(
            "bundled.json",
            r#"{"namespace": "local", "name": "bundled", "description": "d", "input_schema": {"type": "object"}, "command": ["sed", "-nf../site/run.sh"]}"#,
        )
        .write(
            "shell_line.json",
            r#"{"namespace": "local", "name": "shell_line", "description": "d", "input_schema": {"type": "object"}, "command": ["sh", "-c", "cd /tmp && sh ../site/run.sh"]}"#,
        )
        .write(
            "search_path.json",
            r#"{"namespace": "local", "name": "search_path", "description": "d", "input_schema": {"type": "object"}, "command": ["env", "PYTHONPATH=/nowhere:../site", "python3", "-c", "import run"]}"#,
        )
        .write(
            "dangling.json",
            r#"{"namespace": "local", "name": "dangling", "description": "d", "input_schema": {"type": "object"}, "command": ["sh", "later.sh"]}"#,
        )
        .write(
            "server.json",
            &format!(
                r#"{{"namespace": "served", "mcp_server": {{"command": [{:?}]}}}}"#,
                script.to_str().unwrap()
            ),
        )
        .add(&["word_count.json", "word_count.py"]);
    std::fs::write(site.join("linked.json"), tool("linked", "true")).unwrap();
    std::os::unix::fs::symlink(
        site.join("linked.json"),
        setup.tools_d().join("linked.json"),
    )
    .unwrap();
    std::os::unix::fs::symlink(&script, setup.tools_d().join("linked.sh")).unwrap();
    std::os::unix::fs::symlink(site.join("later.sh"), setup.tools_d().join("later.sh")).unwrap();
    let check = setup.engine(&["check"]);
    let report = String::from_utf8(check.stdout).unwrap();
    let why = format!(
        "lies in the project root {}, which the model writes: keep tool and provider files, and the programs tools run, outside every project root",
        site.display()
    );
    for file in [
        "absolute.json",
        "relative.json",
        "interpreted.json",
        "through_link.json",
        "glued.json",
        "bundled.json",
        "shell_line.json",
        "search_path.json",
        "dangling.json",
        "server.json",
        "linked.json",
    ] {
        let line = report
            .lines()
            .find(|line| line.contains(file))
            .unwrap_or_else(|| panic!("{file} is not listed:\n{report}"));
        assert!(
            line.contains("skipped, 0 tools") && line.contains(&why),
            "{line}"
        );
    }
    let own_cwd = report
        .lines()
        .find(|line| line.contains("own_cwd.json"))
        .unwrap_or_else(|| panic!("own_cwd.json is not listed:\n{report}"));
    assert!(
        own_cwd.contains("skipped, 0 tools") && own_cwd.contains("leads through /proc/self"),
        "{own_cwd}"
    );
    assert!(
        report.contains("word_count.json loaded, 1 tools"),
        "{report}"
    );
    let called = setup.engine(&["call", "local__absolute", "{}"]);
    assert!(!called.status.success(), "{called:?}");
    assert!(!mark.exists(), "a program in the project root ran");
}

/// Issue 37 #2: a file that asks (`"context": ["conversation"]`) is given the
/// conversation of each call in one, a command in `ENGINE_CONVERSATION_ID` and an MCP
/// server in the call's `_meta`; a file that does not ask is given nothing, and neither
/// is a call outside a conversation.
#[test]
fn only_a_file_that_asks_is_told_the_conversation_and_only_for_a_call_in_one() {
    let setup = Setup::new("conversation", &format!("data_dir = \"data\"\n{AGENT}"));
    setup.add(&[
        "whose.json",
        "whose.sh",
        "unasked.json",
        "whose_server.py",
        "whose-server.json",
        "untold-server.json",
    ]);
    let call = |tool: &str, conversation: Option<&str>| {
        let mut args = vec!["call"];
        if let Some(conversation) = conversation {
            args.extend(["--subscriber", "u-1", "--conversation", conversation]);
        }
        args.extend([tool, "{}"]);
        let output = setup.command_from_its_directory(&args).output().unwrap();
        serde_json::from_slice::<Value>(&output.stdout)
            .unwrap_or_else(|_| panic!("JSON from the call: {output:?}"))
    };
    // The conversation's id and nothing else of the turn.
    assert_eq!(
        call("local__whose", Some("c-7")),
        json!({"conversation": "c-7", "variables": ["ENGINE_CONVERSATION_ID"]})
    );
    assert_eq!(
        call("local__unasked", Some("c-7")),
        json!({"conversation": null, "variables": []})
    );
    assert_eq!(
        call("local__whose", None),
        json!({"conversation": null, "variables": []})
    );
    // The server's answer is its structured content.
    assert_eq!(call("told__whose", Some("c-7")), json!({"result": "c-7"}));
    assert_eq!(
        call("untold__whose", Some("c-7")),
        json!({"result": "none"})
    );
    assert_eq!(call("told__whose", None), json!({"result": "none"}));
}
