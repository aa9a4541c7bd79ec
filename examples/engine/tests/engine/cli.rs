//! The example engine as a user runs it: each subcommand, as a process.

use std::process::{Command, Output};

use serde_json::Value;

fn engine(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_engine"))
        .args(args)
        .output()
        .expect("the engine runs")
}

/// The engine with `examples/engine.toml`, the support agent's CRM key in the
/// environment, and `args`.
fn configured_engine(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_engine"))
        .args(["--config", "../../examples/engine.toml"])
        .args(args)
        .env("ENGINE_SECRET__support__crm_api_key", SUPPORT_KEY)
        .output()
        .expect("the engine runs")
}

const SUPPORT_KEY: &str = "key-from-the-environment";

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("UTF-8 output")
}

#[test]
fn tools_lists_plugins_and_tools_with_localized_summaries() {
    let output = engine(&["tools", "--locale", "it-IT"]);
    assert!(output.status.success(), "{output:?}");
    let listing = stdout(&output);
    let lines: Vec<&str> = listing.lines().collect();
    assert_eq!(lines[0], "Acme (acme-crm 0.1.0, engine >=0.1, <2)");
    assert!(
        listing.contains("acme:book_appointment        [crm] Prenota un appuntamento nel CRM."),
        "{listing}"
    );
    // A tool's secrets, each with its type and its label in the reader's language.
    assert!(
        listing.contains(
            "(in a conversation only: not over MCP)\n    secret crm_api_key (password): Chiave API del CRM\n"
        ),
        "{listing}"
    );
    assert!(listing.contains("Meteo (weather 0.1.0"), "{listing}");
    assert!(
        listing.contains("weather:weather              [web] Temperature tipiche di una città."),
        "{listing}"
    );
}

#[test]
fn catalog_prints_each_format() {
    for (format, names) in [
        ("openai", "/0/function/name"),
        ("anthropic", "/0/name"),
        ("gemini", "/0/functionDeclarations/0/name"),
        ("mcp", "/tools/0/name"),
    ] {
        let output = engine(&["catalog", "--format", format]);
        assert!(output.status.success(), "{format}: {output:?}");
        let catalog: Value = serde_json::from_str(&stdout(&output)).expect("a JSON catalog");
        assert_eq!(
            catalog.pointer(names),
            Some(&Value::from("acme__book_appointment")),
            "{format}"
        );
    }
    let bad = engine(&["catalog", "--format", "openapi"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("use openai, anthropic, gemini or mcp"));
}

#[test]
fn call_prints_the_output_or_the_models_error() {
    let output = engine(&[
        "call",
        "weather__weather",
        r#"{"city": "Tokyo", "days": 2, "units": "fahrenheit"}"#,
    ]);
    assert!(output.status.success(), "{output:?}");
    let forecast: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(forecast["city"], "Tokyo");
    assert_eq!(forecast["temps"].as_array().unwrap().len(), 2);

    let output = engine(&[
        "call",
        "weather:weather",
        r#"{"city": "Tokyo", "days": "2", "units": null}"#,
    ]);
    assert_eq!(output.status.code(), Some(1));
    let error: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(error["error"]["kind"], "invalid_arguments");
    assert_eq!(
        error["error"]["message"],
        r#"invalid arguments: `days`: invalid type: string "2", expected u8"#
    );
}

#[test]
fn check_reports_what_it_validated() {
    let output = engine(&["check"]);
    assert!(output.status.success(), "{output:?}");
    let report = stdout(&output);
    assert!(
        report.starts_with(
            "ok: 8 plugins, 20 tools (staged actions: 1), 3 hooks, channels: 1, engine-core 0.1.0\n"
        ),
        "{report}"
    );
    for format in ["openai", "anthropic", "gemini", "mcp"] {
        assert!(report.contains(&format!("catalog {format}")), "{report}");
    }
    for line in [
        "  hooks conversation_start none\n",
        "  hooks message_received   guard:blank_message, acme:order_ids_hint\n",
        "  hooks response_generated guard:dirty_output_guard\n",
        "  hooks response_sent      none\n",
        "  agent default      9 tools equipped, 11 left out, 3 hooks, streaming of replies off: a hook it runs may replace or regenerate replies\n",
        "    left out builtin:list_files: it works on project files, and the agent has no project root (`[agents.default.project] root = \"...\"`)\n",
        "    left out acme:contact_card: the secret `crm_api_key` is not configured; its plugin's settings are not configured (`[agents.default.plugins.acme]`)\n",
        "    left out contacts:log_contact: the secret `crm_book` is not configured\n",
    ] {
        assert!(report.contains(line), "`{line}` is missing from:\n{report}");
    }
}

#[test]
fn tools_lists_hooks_by_event_in_the_order_they_run() {
    let output = engine(&["tools", "--locale", "it-IT"]);
    assert!(output.status.success(), "{output:?}");
    let listing = stdout(&output);
    let hooks = listing
        .split_once("Hooks, by event, in the order they run\n")
        .and_then(|(_, rest)| rest.split_once("Agents\n"))
        .map(|(hooks, _)| hooks)
        .unwrap_or_else(|| panic!("no hook section in:\n{listing}"));
    assert_eq!(
        hooks,
        "  conversation_start: none\n\
         \x20 message_received:\n\
         \x20       0  guard:blank_message        Risponde ai messaggi vuoti. (2000 ms)\n\
         \x20     100  acme:order_ids_hint        Spiega gli identificativi Acme quando si parla di ordini. (2000 ms)\n\
         \x20 response_generated:\n\
         \x20      10  guard:dirty_output_guard   Ripete un turno con output corrotto. (2000 ms, mutates the response)\n\
         \x20 response_sent: none\n"
    );
    // Hooks are not tools: none is listed among a plugin's tools.
    let tools = listing.split_once("Hooks, by event").unwrap().0;
    assert!(
        !tools.contains("guard:") && !tools.contains("order_ids_hint"),
        "{tools}"
    );
}

#[test]
fn tools_that_read_a_conversation_say_they_are_not_offered_over_mcp() {
    let output = engine(&["tools"]);
    assert!(output.status.success(), "{output:?}");
    let listing = stdout(&output);
    let line_of = |id: &str| {
        listing
            .lines()
            .find(|line| line.trim_start().starts_with(&format!("{id} ")))
            .unwrap_or_else(|| panic!("no line for {id} in:\n{listing}"))
            .to_owned()
    };
    let marker = "(in a conversation only: not over MCP)";
    for id in [
        "acme:contact_card",
        "notes:note_file",
        "notes:read_file",
        "notes:recall",
        "notes:remember",
    ] {
        assert!(line_of(id).ends_with(marker), "{}", line_of(id));
    }
    for id in ["weather:weather", "notes:summarize", "notes:save_note"] {
        assert!(!line_of(id).contains(marker), "{}", line_of(id));
    }
    assert!(
        line_of("contacts:log_contact").ends_with(
            "(staged action: performed after the reply; in a conversation only, not over MCP)"
        ),
        "{}",
        line_of("contacts:log_contact")
    );
}

#[test]
fn tools_lists_the_channels_and_where_each_is_mounted() {
    let mounted = stdout(&engine(&[
        "--config",
        "../../examples/turns.toml",
        "--agent",
        "assistant",
        "tools",
    ]));
    assert!(
        mounted.contains("\n  POST /channels/webhook runs turns of `assistant`\n"),
        "{mounted}"
    );
    let listing = stdout(&engine(&["tools"]));
    assert!(
        listing.contains(
            "channel webhook (webhook 0.1.0, API version 0, unstable): Messages posted as JSON by another service, answered as JSON.\n\
             \x20 not mounted: no `[channels.webhook]` in the configuration\n"
        ),
        "{listing}"
    );
}

#[test]
fn agents_equip_what_their_configuration_grants_and_say_what_they_leave_out() {
    let output = configured_engine(&["tools"]);
    assert!(output.status.success(), "{output:?}");
    let listing = stdout(&output);
    let agents = listing.split_once("Agents\n").expect("an agent section").1;
    assert_eq!(
        agents,
        "  default: knowledge none, model none, secrets 0, project none, enables every tool\n\
         \x20   equips: acme:book_appointment, acme:find_orders, notes:note_file, notes:read_file, notes:recall, notes:remember, notes:search_notes, notes:summarize, weather:weather\n\
         \x20   leaves out acme:contact_card: the secret `crm_api_key` is not configured; its plugin's settings are not configured (`[agents.default.plugins.acme]`)\n\
         \x20   leaves out builtin:create_directory: it works on project files, and the agent has no project root (`[agents.default.project] root = \"...\"`)\n\
         \x20   leaves out builtin:delete_path: it works on project files, and the agent has no project root (`[agents.default.project] root = \"...\"`)\n\
         \x20   leaves out builtin:get_text_content: it works on project files, and the agent has no project root (`[agents.default.project] root = \"...\"`)\n\
         \x20   leaves out builtin:list_files: it works on project files, and the agent has no project root (`[agents.default.project] root = \"...\"`)\n\
         \x20   leaves out builtin:move_path: it works on project files, and the agent has no project root (`[agents.default.project] root = \"...\"`)\n\
         \x20   leaves out builtin:read_path_meta: it works on project files, and the agent has no project root (`[agents.default.project] root = \"...\"`)\n\
         \x20   leaves out builtin:write_text_content: it works on project files, and the agent has no project root (`[agents.default.project] root = \"...\"`)\n\
         \x20   leaves out calendar:whoami: its plugin's settings are not configured (`[agents.default.plugins.calendar]`); it takes OAuth tokens, and the agent has no client for `calendar:acme` (`[agents.default.oauth.\"<provider>\"]`)\n\
         \x20   leaves out contacts:log_contact: the secret `crm_book` is not configured\n\
         \x20   leaves out notes:save_note: it needs the knowledge base at `write`, and the agent grants nothing\n\
         \x20   runs every linked hook\n\
         \x20     message_received: guard:blank_message (at 0, 2000 ms), acme:order_ids_hint (at 100, 2000 ms)\n\
         \x20     response_generated: guard:dirty_output_guard (at 10, 2000 ms)\n\
         \x20   streaming of replies: off: a hook it runs may replace or regenerate replies\n\
         \x20 docs: knowledge none, model none, secrets 0, project target/docs-project, enables the tools it lists\n\
         \x20   equips: builtin:get_text_content, builtin:list_files, builtin:read_path_meta\n\
         \x20   leaves out acme:book_appointment: it is not in `agents.docs.tools`\n\
         \x20   leaves out acme:contact_card: it is not in `agents.docs.tools`\n\
         \x20   leaves out acme:find_orders: it is not in `agents.docs.tools`\n\
         \x20   leaves out builtin:create_directory: it is not in `agents.docs.tools`\n\
         \x20   leaves out builtin:delete_path: it is not in `agents.docs.tools`\n\
         \x20   leaves out builtin:move_path: it is not in `agents.docs.tools`\n\
         \x20   leaves out builtin:write_text_content: it is not in `agents.docs.tools`\n\
         \x20   leaves out calendar:whoami: it is not in `agents.docs.tools`\n\
         \x20   leaves out contacts:log_contact: it is not in `agents.docs.tools`\n\
         \x20   leaves out notes:note_file: it is not in `agents.docs.tools`\n\
         \x20   leaves out notes:read_file: it is not in `agents.docs.tools`\n\
         \x20   leaves out notes:recall: it is not in `agents.docs.tools`\n\
         \x20   leaves out notes:remember: it is not in `agents.docs.tools`\n\
         \x20   leaves out notes:save_note: it is not in `agents.docs.tools`\n\
         \x20   leaves out notes:search_notes: it is not in `agents.docs.tools`\n\
         \x20   leaves out notes:summarize: it is not in `agents.docs.tools`\n\
         \x20   leaves out weather:weather: it is not in `agents.docs.tools`\n\
         \x20   runs the hooks it lists\n\
         \x20     message_received: guard:blank_message (at 0, 500 ms)\n\
         \x20   streaming of replies: on\n\
         \x20 support: knowledge write, model spend cap $0.02, secrets 1, project none, enables every tool\n\
         \x20   equips: acme:book_appointment, acme:contact_card, acme:find_orders, notes:note_file, notes:read_file, notes:recall, notes:remember, notes:save_note, notes:search_notes, notes:summarize, weather:weather\n\
         \x20   leaves out builtin:create_directory: it works on project files, and the agent has no project root (`[agents.support.project] root = \"...\"`)\n\
         \x20   leaves out builtin:delete_path: it works on project files, and the agent has no project root (`[agents.support.project] root = \"...\"`)\n\
         \x20   leaves out builtin:get_text_content: it works on project files, and the agent has no project root (`[agents.support.project] root = \"...\"`)\n\
         \x20   leaves out builtin:list_files: it works on project files, and the agent has no project root (`[agents.support.project] root = \"...\"`)\n\
         \x20   leaves out builtin:move_path: it works on project files, and the agent has no project root (`[agents.support.project] root = \"...\"`)\n\
         \x20   leaves out builtin:read_path_meta: it works on project files, and the agent has no project root (`[agents.support.project] root = \"...\"`)\n\
         \x20   leaves out builtin:write_text_content: it works on project files, and the agent has no project root (`[agents.support.project] root = \"...\"`)\n\
         \x20   leaves out calendar:whoami: its plugin's settings are not configured (`[agents.support.plugins.calendar]`); it takes OAuth tokens, and the agent has no client for `calendar:acme` (`[agents.support.oauth.\"<provider>\"]`)\n\
         \x20   leaves out contacts:log_contact: the secret `crm_book` is not configured\n\
         \x20   runs every linked hook\n\
         \x20     message_received: guard:blank_message (at 0, 2000 ms), acme:order_ids_hint (at 100, 2000 ms)\n\
         \x20     response_generated: guard:dirty_output_guard (at 10, 2000 ms)\n\
         \x20   streaming of replies: off: a hook it runs may replace or regenerate replies\n"
    );

    // The default agent does not have the tool: the model would not see it either.
    let catalog = engine(&[
        "--config",
        "../../examples/engine.toml",
        "catalog",
        "--format",
        "openai",
    ]);
    assert!(!stdout(&catalog).contains("acme__contact_card"));
}

#[test]
fn each_agent_gets_the_plugin_state_built_from_its_own_settings() {
    let dir = std::env::temp_dir().join(format!("engine-cli-state-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("engine.toml");
    // A call in a conversation keeps its state under the data directory.
    let mut toml = format!("data_dir = {:?}\n", dir.join("data"));
    for (agent, region) in [("eu-desk", "eu"), ("us-desk", "us")] {
        toml += &format!(
            "[agents.{agent}]\nsecrets = {{ crm_api_key = \"a-key-of-some-length\" }}\n\
             [agents.{agent}.plugins.acme]\nbase_url = \"https://crm.acme.example/\"\nregion = \"{region}\"\n"
        );
    }
    std::fs::write(&path, toml).unwrap();
    for (agent, link) in [
        ("eu-desk", "https://crm.acme.example/eu/contacts/c-7"),
        ("us-desk", "https://crm.acme.example/us/contacts/c-7"),
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_engine"))
            .args(["--config", path.to_str().unwrap(), "--agent", agent, "call"])
            .args(["--subscriber", "c-7", "--conversation", "conversation-1"])
            .args(["acme__contact_card", "{}"])
            // Only this file's agents and secrets, whatever the runner's environment.
            .env_clear()
            .output()
            .expect("the engine runs");
        assert!(output.status.success(), "{output:?}");
        let card: Value = serde_json::from_str(&stdout(&output)).unwrap();
        assert_eq!(card["link"], link, "{agent}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_call_in_a_conversation_uses_and_keeps_its_state_call_by_call() {
    let dir = std::env::temp_dir().join(format!("engine-cli-kept-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // No agent runs turns: the state is kept all the same.
    let config = dir.join("engine.toml");
    std::fs::write(&config, format!("data_dir = {:?}\n", dir.join("data"))).unwrap();
    let call_as = |subscriber: &str, conversation: Option<&str>, tool: &str, arguments: &str| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_engine"));
        command.arg("--config").arg(&config).arg("call");
        if let Some(conversation) = conversation {
            command.args(["--subscriber", subscriber, "--conversation", conversation]);
        }
        // Only this test's configuration, whatever the runner's environment.
        let output = command
            .args([tool, arguments])
            .env_clear()
            .output()
            .expect("the engine runs");
        (output.status.success(), stdout(&output).trim().to_owned())
    };
    let call = |conversation: Option<&str>, tool: &str, arguments: &str| {
        call_as("u-1", conversation, tool, arguments)
    };
    let remembered = call(
        Some("c-1"),
        "notes__remember",
        r#"{"name": "a", "text": "hello"}"#,
    );
    assert_eq!(remembered, (true, "true".to_owned()));
    // Another process, the same conversation: the note is there; in another, it is not.
    let recalled = call(Some("c-1"), "notes__recall", r#"{"name": "a"}"#);
    assert_eq!(recalled, (true, "\"hello\"".to_owned()));
    assert_eq!(
        call(Some("c-2"), "notes__recall", r#"{"name": "a"}"#),
        (true, "null".to_owned())
    );
    // A later call overwrites what an earlier one kept.
    let overwritten = call(
        Some("c-1"),
        "notes__remember",
        r#"{"name": "a", "text": "again"}"#,
    );
    assert_eq!(overwritten, (true, "true".to_owned()));
    assert_eq!(
        call(Some("c-1"), "notes__recall", r#"{"name": "a"}"#),
        (true, "\"again\"".to_owned())
    );
    // The conversation became u-1's with the first call that kept state: another
    // subscriber neither reads nor writes it.
    let (succeeded, refused) = call_as("u-2", Some("c-1"), "notes__recall", r#"{"name": "a"}"#);
    assert!(!succeeded, "{refused}");
    assert!(!refused.contains("again"), "{refused}");
    // Outside a conversation, the answer says why the tool is not offered.
    let (succeeded, outside) = call(None, "notes__recall", r#"{"name": "a"}"#);
    assert!(!succeeded);
    assert!(
        outside.contains("`notes:recall` works only in a conversation"),
        "{outside}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_call_in_a_turn_gets_the_subscriber_from_the_turn_and_audits_it() {
    // The example configuration, with the conversation's state kept in a directory of
    // this test's (a call in a conversation keeps it under `data_dir`).
    let dir = std::env::temp_dir().join(format!("engine-cli-audit-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let example = std::fs::read_to_string("../../examples/engine.toml").unwrap();
    let data_dir = "data_dir = \"target/engine-data\"";
    assert!(
        example.contains(data_dir),
        "examples/engine.toml moved its data_dir"
    );
    let config = dir.join("engine.toml");
    let own = format!("data_dir = {:?}", dir.join("data"));
    std::fs::write(&config, example.replace(data_dir, &own)).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_engine"))
        .arg("--config")
        .arg(&config)
        .args(["--agent", "support", "call", "--subscriber", "c-12"])
        .args([
            "--conversation",
            "conversation-1",
            "acme__contact_card",
            "{}",
        ])
        .env("ENGINE_SECRET__support__crm_api_key", SUPPORT_KEY)
        .output()
        .expect("the engine runs");
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        stdout(&output).trim(),
        r#"{"customer_id":"c-12","channel":"email","link":"https://crm.acme.example/eu/contacts/c-12"}"#
    );
    let log = String::from_utf8_lossy(&output.stderr);
    assert!(
        log.contains(r#"subscriber="c-12" event=contact_card_read detail="c-12""#),
        "the audit event is logged with the turn's subscriber: {log}"
    );
    // This tool never prints its key, so a check for the key here could not fail: that
    // no secret prints is the subject of tests/secret-leaks, whose tool tries every way.

    // Outside a conversation there is no subscriber to read: the tool is not offered.
    let outside = configured_engine(&["--agent", "support", "call", "acme__contact_card", "{}"]);
    assert_eq!(outside.status.code(), Some(1));
    assert!(
        stdout(&outside).contains(r#""kind":"unknown_tool""#),
        "{outside:?}"
    );
}

#[test]
fn an_unknown_agent_is_refused_naming_the_configured_ones() {
    let output = engine(&[
        "--config",
        "../../examples/engine.toml",
        "--agent",
        "sales",
        "tools",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr).trim(),
        "there is no agent `sales`; the configured agents are: default, docs, support"
    );
}

#[test]
fn a_secret_variable_for_an_agent_the_configuration_lacks_is_refused_naming_the_agents() {
    let output = Command::new(env!("CARGO_BIN_EXE_engine"))
        .args(["--config", "../../examples/engine.toml", "tools"])
        .env("ENGINE_SECRET__suport__crm_api_key", SUPPORT_KEY)
        .output()
        .expect("the engine runs");
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stderr).trim(),
        "the engine refused to start: `ENGINE_SECRET__suport__crm_api_key` is for the agent \
         `suport`, which the configuration does not define; the configured agents are: \
         default, docs, support. Rename the variable, or add [agents.suport] to the configuration"
    );
}

#[test]
fn a_variable_that_is_not_utf8_is_skipped_with_a_warning() {
    use std::os::unix::ffi::OsStrExt;
    let output = Command::new(env!("CARGO_BIN_EXE_engine"))
        .arg("check")
        .env(
            std::ffi::OsStr::from_bytes(b"NOT_UTF8"),
            std::ffi::OsStr::from_bytes(b"\xff"),
        )
        .output()
        .expect("the engine runs");
    assert!(output.status.success(), "{output:?}");
    assert!(
        String::from_utf8_lossy(&output.stderr).contains(
            "skipped an environment variable whose name or value is not UTF-8 variable=NOT_UTF8"
        ),
        "{output:?}"
    );
}

#[test]
fn a_timeout_out_of_range_is_refused_before_anything_runs() {
    for args in [
        &[
            "call",
            "--timeout-ms",
            "18446744073709551615",
            "weather__weather",
            "{}",
        ][..],
        &["call", "--timeout-ms", "0", "weather__weather", "{}"][..],
        &["mcp", "--timeout-ms", "18446744073709551615"][..],
    ] {
        let output = engine(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {output:?}");
        assert!(
            String::from_utf8_lossy(&output.stderr).contains("not in 1..=86400000"),
            "{args:?}: {output:?}"
        );
    }
}

#[test]
fn a_configuration_with_money_that_is_not_a_number_or_a_ttl_that_overflows_is_refused() {
    let dir = std::env::temp_dir().join(format!("engine-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("out-of-range.toml");
    std::fs::write(
        &path,
        "[agents.support]\nmodel = { spend_cap_usd = nan }\n[artifacts]\nttl_secs = 18446744073709551615\n",
    )
    .unwrap();
    let output = engine(&[
        "--config",
        path.to_str().unwrap(),
        "--agent",
        "support",
        "check",
    ]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stderr).trim(),
        format!(
            "the engine refused to start: the configuration is not valid: 2 problem(s):\n  \
             {path}: `agents.support.model.spend_cap_usd` is NaN: give a finite amount of US dollars, 0 or more\n  \
             {path}: `artifacts.ttl_secs` is 18446744073709551615: give 1 to 604800 seconds",
            path = path.display()
        )
    );
}
