//! The built-in file tools in the example engine: equipped per agent by its project root
//! and its `tools` list, refused at start-up when configured wrong, and used by a model
//! in a turn (seed 002's example, against llmock).

use std::path::PathBuf;
use std::process::{Command, Output};

use crate::turn_setup::{done, of_type, Setup};
use serde_json::{json, Value};
use test_support::llmock::Llmock;

/// A scratch directory for one test, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("engine-files-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    /// Runs the engine with the configuration `toml` and `args`.
    fn engine(&self, toml: &str, args: &[&str]) -> Output {
        let config = self.0.join("engine.toml");
        std::fs::write(&config, toml).unwrap();
        Command::new(env!("CARGO_BIN_EXE_engine"))
            .arg("--config")
            .arg(&config)
            .args(args)
            // Only what the engine says, whatever the runner's logging.
            .env_remove("RUST_LOG")
            .output()
            .expect("the engine runs")
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn an_agent_equips_the_built_ins_with_a_project_root_and_only_those_its_list_enables() {
    let scratch = Scratch::new("equip");
    let toml = format!(
        "[agents.writer]\nproject = {{ root = {root:?} }}\n\
         [agents.reader]\ntools = [\"builtin:list_files\", \"builtin:get_text_content\", \"weather:weather\"]\n\
         project = {{ root = {root:?} }}\n\
         [agents.plain]\n",
        root = scratch.0.join("site"),
    );
    let output = scratch.engine(&toml, &["--agent", "plain", "tools"]);
    assert!(output.status.success(), "{output:?}");
    let listing = stdout(&output);
    // The agent's header line and the indented lines under it.
    let agent = |name: &str| {
        let mut lines = listing
            .lines()
            .skip_while(|line| !line.starts_with(&format!("  {name}: ")));
        let header = lines.next().expect(name);
        let under = lines.take_while(|line| line.starts_with("    "));
        std::iter::once(header)
            .chain(under)
            .collect::<Vec<_>>()
            .join("\n")
            + "\n"
    };
    let writer = agent("writer");
    assert!(
        writer.contains("builtin:create_directory, builtin:delete_path, builtin:get_text_content, builtin:list_files, builtin:move_path, builtin:read_path_meta, builtin:write_text_content"),
        "{writer}"
    );
    let reader = agent("reader");
    assert!(reader.contains("enables the tools it lists"), "{reader}");
    assert!(
        reader.contains("equips: builtin:get_text_content, builtin:list_files, weather:weather\n"),
        "{reader}"
    );
    assert!(
        reader
            .contains("leaves out builtin:write_text_content: it is not in `agents.reader.tools`"),
        "{reader}"
    );
    let plain = agent("plain");
    assert!(plain.contains("project none"), "{plain}");
    assert!(
        plain.contains("leaves out builtin:list_files: it works on project files, and the agent has no project root (`[agents.plain.project] root = \"...\"`)"),
        "{plain}"
    );

    // The model sees the built-ins by their bare names, strict.
    let catalog = scratch.engine(
        &toml,
        &["--agent", "reader", "catalog", "--format", "openai"],
    );
    let catalog: Value = serde_json::from_str(&stdout(&catalog)).unwrap();
    let names: Vec<&str> = catalog
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["get_text_content", "list_files", "weather__weather"]
    );
    assert!(catalog
        .as_array()
        .unwrap()
        .iter()
        .all(|tool| tool["function"]["strict"] == true));

    // `check` says the same of each agent.
    let check = scratch.engine(&toml, &["--agent", "plain", "check"]);
    assert!(check.status.success(), "{check:?}");
    let report = stdout(&check);
    for line in [
        "    left out builtin:create_directory: it is not in `agents.reader.tools`\n",
        "    left out builtin:list_files: it works on project files, and the agent has no project root (`[agents.plain.project] root = \"...\"`)\n",
    ] {
        assert!(report.contains(line), "`{line}` is missing from:\n{report}");
    }
    // The model of an agent without a root is not offered the built-ins.
    let catalog = stdout(&scratch.engine(
        &toml,
        &["--agent", "plain", "catalog", "--format", "openai"],
    ));
    for name in [
        "create_directory",
        "delete_path",
        "get_text_content",
        "list_files",
        "move_path",
        "read_path_meta",
        "write_text_content",
    ] {
        assert!(
            !catalog.contains(&format!("\"{name}\"")),
            "{name} offered: {catalog}"
        );
    }
}

#[test]
fn an_agent_reads_and_writes_beneath_its_root_and_nothing_it_did_not_enable() {
    let scratch = Scratch::new("call");
    let root = scratch.0.join("site");
    let toml = format!(
        "[agents.reader]\ntools = [\"builtin:get_text_content\"]\nproject = {{ root = {root:?} }}\n\
         [agents.writer]\nproject = {{ root = {root:?} }}\n"
    );
    let write = scratch.engine(
        &toml,
        &[
            "--agent",
            "writer",
            "call",
            "write_text_content",
            r#"{"path": "hello.md", "text": "Hello\n"}"#,
        ],
    );
    assert!(write.status.success(), "{write:?}");
    assert_eq!(
        std::fs::read_to_string(root.join("hello.md")).unwrap(),
        "Hello\n"
    );
    let read = scratch.engine(
        &toml,
        &[
            "--agent",
            "reader",
            "call",
            "get_text_content",
            r#"{"path": "hello.md"}"#,
        ],
    );
    assert_eq!(stdout(&read).trim(), r#""Hello\n""#);
    let refused = scratch.engine(
        &toml,
        &[
            "--agent",
            "reader",
            "call",
            "write_text_content",
            r#"{"path": "hello.md", "text": "x"}"#,
        ],
    );
    assert_eq!(refused.status.code(), Some(1));
    let error: Value = serde_json::from_str(&stdout(&refused)).unwrap();
    assert_eq!(error["error"]["kind"], "unknown_tool");
    // The person at the command line learns why; the model never would.
    assert_eq!(
        stderr(&refused).trim(),
        "`builtin:write_text_content` is linked, and the agent `reader` leaves it out: it is not in `agents.reader.tools`"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("hello.md")).unwrap(),
        "Hello\n"
    );
}

#[test]
fn an_agent_moves_and_deletes_only_with_the_tools_its_list_enables() {
    let scratch = Scratch::new("move-delete");
    let root = scratch.0.join("site");
    let toml = format!(
        "[agents.mover]\ntools = [\"builtin:move_path\"]\nproject = {{ root = {root:?} }}\n\
         [agents.cleaner]\ntools = [\"builtin:delete_path\"]\nproject = {{ root = {root:?} }}\n"
    );
    // The engine creates the root at start-up: the first call makes it.
    let call = |agent: &str, tool: &str, arguments: &str| {
        scratch.engine(&toml, &["--agent", agent, "call", tool, arguments])
    };
    let refused = call(
        "mover",
        "delete_path",
        r#"{"path": "x", "recursive": false}"#,
    );
    assert_eq!(refused.status.code(), Some(1));
    assert_eq!(
        stderr(&refused).trim(),
        "`builtin:delete_path` is linked, and the agent `mover` leaves it out: it is not in `agents.mover.tools`"
    );
    std::fs::create_dir_all(root.join("drafts")).unwrap();
    std::fs::write(root.join("drafts/a.md"), "A\n").unwrap();
    let moved = call(
        "mover",
        "move_path",
        r#"{"from": "drafts/a.md", "to": "a.md", "overwrite": false}"#,
    );
    assert!(moved.status.success(), "{moved:?}");
    assert_eq!(
        serde_json::from_str::<Value>(&stdout(&moved)).unwrap(),
        json!({"ok": true, "replaced": false})
    );
    assert_eq!(std::fs::read_to_string(root.join("a.md")).unwrap(), "A\n");
    let refused = call(
        "cleaner",
        "move_path",
        r#"{"from": "a.md", "to": "b.md", "overwrite": false}"#,
    );
    assert_eq!(refused.status.code(), Some(1));
    assert_eq!(
        stderr(&refused).trim(),
        "`builtin:move_path` is linked, and the agent `cleaner` leaves it out: it is not in `agents.cleaner.tools`"
    );
    assert!(root.join("a.md").exists() && !root.join("b.md").exists());
    let deleted = call(
        "cleaner",
        "delete_path",
        r#"{"path": "drafts", "recursive": false}"#,
    );
    assert!(deleted.status.success(), "{deleted:?}");
    assert_eq!(
        serde_json::from_str::<Value>(&stdout(&deleted)).unwrap(),
        json!({"ok": true, "type": "directory", "removed": 1})
    );
    assert!(!root.join("drafts").exists());
    assert!(root.join("a.md").exists());
}

#[test]
fn a_tools_list_naming_a_tool_nobody_links_refuses_start_up() {
    let scratch = Scratch::new("unknown-id");
    let output = scratch.engine(
        "[agents.docs]\ntools = [\"builtin:list_files\", \"builtin:delete_file\", \"list_files\"]\n",
        &["--agent", "docs", "tools"],
    );
    assert_eq!(output.status.code(), Some(1));
    let message = stderr(&output);
    for (unknown, suggested) in [
        (
            "builtin:delete_file",
            "did you mean `builtin:delete_path`? ",
        ),
        ("list_files", ""),
    ] {
        assert!(
            message.contains(&format!("`agents.docs.tools` names `{unknown}`, which no linked plugin defines: {suggested}name linked tools only (`acme:book_appointment`,")),
            "{message}"
        );
    }
}

#[test]
fn a_data_dir_that_cannot_be_created_is_refused_naming_the_key_and_the_absolute_directory() {
    let scratch = Scratch::new("bad-data-dir");
    std::fs::write(scratch.0.join("a-file"), "").unwrap();
    let absolute = scratch.0.canonicalize().unwrap().join("a-file/data");
    // The knowledge store's, then the conversation store's (an agent that runs turns).
    for agent in [
        "[agents.docs]\nknowledge = \"read\"\n",
        "[providers.p]\nwire = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n\
         [agents.docs.turn]\nprovider = \"p\"\n",
    ] {
        // Relative, as the default `data` is: the engine runs in the scratch directory.
        std::fs::write(
            scratch.0.join("engine.toml"),
            format!("data_dir = \"a-file/data\"\n{agent}"),
        )
        .unwrap();
        let output = Command::new(env!("CARGO_BIN_EXE_engine"))
            .args(["--config", "engine.toml", "--agent", "docs", "tools"])
            .current_dir(&scratch.0)
            .env_remove("RUST_LOG")
            .output()
            .expect("the engine runs");
        assert_eq!(output.status.code(), Some(1), "{agent}");
        let message = stderr(&output);
        assert!(
            message.contains(&format!(
                "`data_dir` is a-file/data, and {} could not be created",
                absolute.display()
            )) && message.contains("set `data_dir` to an absolute path"),
            "{message}"
        );
    }
}

#[test]
fn a_project_root_that_is_a_file_or_limits_out_of_range_refuse_start_up() {
    let scratch = Scratch::new("bad-root");
    let file = scratch.0.join("a-file");
    std::fs::write(&file, "").unwrap();
    let output = scratch.engine(
        &format!("[agents.docs]\nproject = {{ root = {file:?} }}\n"),
        &["--agent", "docs", "tools"],
    );
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("could not be opened"),
        "{}",
        stderr(&output)
    );

    let output = scratch.engine(
        &format!(
            "[agents.docs]\nproject = {{ root = {:?}, max_file_bytes = 0, max_list_entries = 1000000 }}\n",
            scratch.0.join("site")
        ),
        &["--agent", "docs", "tools"],
    );
    assert_eq!(output.status.code(), Some(1));
    let message = stderr(&output);
    assert!(
        message.contains("agents.docs.project.max_file_bytes"),
        "{message}"
    );
    assert!(
        message.contains("agents.docs.project.max_list_entries"),
        "{message}"
    );
    assert!(
        !scratch.0.join("site").exists(),
        "nothing is created before the configuration is valid"
    );
}

/// Seed 002's verification: "Create a directory at docs/intro and write an index.page
/// file there", as two calls in one turn, then the reply.
#[test]
fn a_turn_creates_a_directory_and_writes_a_page_into_it() {
    let mock = Llmock::start();
    let project = Scratch::new("turn-project");
    let setup = Setup::new(
        "files",
        &mock,
        "openai",
        "",
        &format!("[agents.bot.project]\nroot = {:?}\n", project.0),
    );
    let page = "# Intro\n\nA short introduction to the docs.\n";
    mock.script(json!([
        {"type": "reply", "tool_calls": [
            {"name": "create_directory", "arguments": {"path": "docs/intro"}},
            {"name": "get_text_content", "arguments": {"path": "../engine.toml"}}
        ]},
        {"type": "reply", "tool_calls": [{"name": "write_text_content", "arguments": {"path": "docs/intro/index.page", "text": page}}]},
        {"type": "reply", "text": "Done. I created docs/intro and wrote index.page with a header and an intro."}
    ]));
    let (events, output) = setup.turn(&[
        "Create a directory at docs/intro and write an index.page file there with a page header and a short intro paragraph.",
    ]);
    assert!(output.status.success(), "{output:?}");
    let calls: Vec<&str> = of_type(&events, "tool_call")
        .iter()
        .map(|call| call["tool_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        calls,
        [
            "builtin:create_directory",
            "builtin:get_text_content",
            "builtin:write_text_content"
        ]
    );
    // Results stream as calls finish, each with its call's id.
    let tool_of = |id: &Value| {
        of_type(&events, "tool_call")
            .into_iter()
            .find(|call| &call["id"] == id)
            .map(|call| call["tool"].as_str().unwrap())
            .expect("a result answers a call")
    };
    let mut statuses: Vec<(&str, &str)> = of_type(&events, "tool_result")
        .iter()
        .map(|result| (tool_of(&result["id"]), result["status"].as_str().unwrap()))
        .collect();
    statuses.sort_unstable();
    assert_eq!(
        statuses,
        [
            ("create_directory", "ok"),
            ("get_text_content", "error"),
            ("write_text_content", "ok")
        ],
        "{events:#?}"
    );
    assert_eq!(done(&events)["stop"]["reason"], "answered");
    assert_eq!(
        std::fs::read_to_string(project.0.join("docs/intro/index.page")).unwrap(),
        page
    );

    // The model was offered the tools by their bare names, and read each result.
    let journal = mock.journal();
    assert_eq!(journal.len(), 3, "{journal:#?}");
    let offered: Vec<&str> = journal[0]["body"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap())
        .collect();
    assert!(
        offered.contains(&"create_directory") && offered.contains(&"write_text_content"),
        "{offered:?}"
    );
    let answers: Vec<Value> = journal[2]["body"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "tool")
        .map(|message| serde_json::from_str(message["content"].as_str().unwrap()).unwrap())
        .collect();
    assert_eq!(
        answers,
        [
            json!({"ok": true, "created": true}),
            json!({"error": {"kind": "failed", "message": "`..` is not allowed: paths go down from the project root, never up"}}),
            json!({"ok": true, "created": true, "size": page.len()})
        ]
    );
    let sent = serde_json::to_string(&journal).unwrap();
    assert!(
        !sent.contains(project.0.to_str().unwrap()),
        "the project's host path reached the model"
    );
}

#[test]
fn a_project_root_that_overlaps_the_data_directory_the_executable_or_another_root_refuses_start_up()
{
    let scratch = Scratch::new("overlap");
    let dir = &scratch.0;
    std::fs::create_dir_all(dir.join("site")).unwrap();
    std::os::unix::fs::symlink(dir.join("site"), dir.join("link")).unwrap();
    let refused = |toml: String, what: &str| {
        let output = scratch.engine(&toml, &["--agent", "a", "tools"]);
        assert_eq!(output.status.code(), Some(1), "{toml}");
        let message = stderr(&output);
        assert!(
            message.contains(&format!("it overlaps {what}")),
            "{toml}: {message}"
        );
    };
    // The data directory inside the root, whether it exists yet or lies behind a symlink
    // or a `..`; the root inside the data directory.
    for data in ["site/data", "link/data", "nothing/../site/data", "."] {
        refused(
            format!(
                "data_dir = {:?}\n[agents.a]\nproject = {{ root = {:?} }}\n",
                dir.join(data),
                dir.join("site")
            ),
            "the engine's data directory",
        );
    }
    assert!(
        !dir.join("site/data").exists(),
        "the check creates no data directory"
    );
    // Two agents, one root within the other's.
    refused(
        format!(
            "data_dir = {:?}\n[agents.a]\nproject = {{ root = {:?} }}\n[agents.b]\nproject = {{ root = {:?} }}\n",
            dir.join("data"),
            dir.join("site"),
            dir.join("link/pages")
        ),
        "the project root",
    );
    // The directory of the engine's executable, which the next start runs.
    // As the engine finds itself: the file, whatever link leads there.
    let executable = std::fs::canonicalize(env!("CARGO_BIN_EXE_engine")).unwrap();
    refused(
        format!(
            "data_dir = {:?}\n[agents.a]\nproject = {{ root = {:?} }}\n",
            dir.join("data"),
            executable.parent().unwrap()
        ),
        &format!("the engine's executable {}", executable.display()),
    );
    // One root shared by two agents, spelled two ways, is fine.
    let shared = scratch.engine(
        &format!(
            "data_dir = {:?}\n[agents.a]\nproject = {{ root = {:?} }}\n[agents.b]\nproject = {{ root = {:?} }}\n",
            dir.join("data"),
            dir.join("site"),
            dir.join("link")
        ),
        &["--agent", "a", "tools"],
    );
    assert!(shared.status.success(), "{shared:?}");
}
