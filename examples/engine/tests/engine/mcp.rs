//! The example engine as an MCP server, driven by the official Python MCP client over
//! stdio and over streamable HTTP.

use std::process::Command;

use serde_json::{json, Value};
use test_support::mcp::{
    drive, drive_with_headers, run_client_beside, serve_with_env, Transport, BOTH,
};

const ENGINE: &str = env!("CARGO_BIN_EXE_engine");

/// What `engine catalog --format mcp --locale LOCALE` prints: the MCP rendering.
fn catalog(locale: &str) -> Value {
    let output = Command::new(ENGINE)
        .args(["catalog", "--format", "mcp", "--locale", locale])
        .output()
        .expect("the engine runs");
    assert!(output.status.success(), "{output:?}");
    serde_json::from_slice(&output.stdout).expect("a JSON catalog")
}

/// One step's entry of a report.
fn step(report: &Value, index: usize) -> &Value {
    &report["steps"][index]
}

/// The text of a result's only content block.
fn text(result: &Value) -> &str {
    let content = result["content"].as_array().expect("content blocks");
    assert_eq!(content.len(), 1, "{result}");
    assert_eq!(content[0]["type"], "text");
    content[0]["text"].as_str().unwrap()
}

#[test]
fn tools_list_is_the_mcp_catalog_in_the_clients_locale() {
    for transport in BOTH {
        let report = drive(
            ENGINE,
            &[],
            transport,
            json!([
                { "list_tools": {} },
                { "list_tools": { "locale": "it-IT" } },
                { "list_tools": { "locale": "it-CH" } },
            ]),
        );
        // The client probed `server/discover` and the server answered it.
        assert_eq!(report["protocol"], "2026-07-28", "{transport:?}");
        assert_eq!(
            step(&report, 0)["tools"],
            catalog("en-US")["tools"],
            "{transport:?}"
        );
        let italian = &step(&report, 1)["tools"];
        assert_eq!(*italian, catalog("it-IT")["tools"], "{transport:?}");
        assert_eq!(italian[0]["title"], "Prenota un appuntamento nel CRM.");
        // The fallback chain: it-CH reads the it-IT titles.
        assert_eq!(step(&report, 2)["tools"], *italian, "{transport:?}");
        let names: Vec<&str> = italian
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| tool["name"].as_str().unwrap())
            .collect();
        // The default agent's tools: the ones that need a secret or a knowledge grant
        // (`acme__contact_card`, `notes__save_note`) are left out, and so are the ones
        // that read a conversation (`notes__note_file`, `notes__read_file`, `notes__recall`,
        // `notes__remember`): an MCP session is not one.
        assert_eq!(
            names,
            [
                "acme__book_appointment",
                "acme__find_orders",
                "notes__search_notes",
                "notes__summarize",
                "weather__weather",
            ]
        );
    }
}

#[test]
fn over_http_accept_language_chooses_the_titles_and_the_flag_is_the_default() {
    let report = drive_with_headers(
        ENGINE,
        &[],
        Transport::Http,
        json!({ "Accept-Language": "de-DE;q=0.5, it-IT;q=0.9, *;q=0.1" }),
        json!([{ "list_tools": {} }, { "list_tools": { "locale": "en-US" } }]),
    );
    assert_eq!(step(&report, 0)["tools"], catalog("it-IT")["tools"]);
    // `_meta.locale` beats the header.
    assert_eq!(step(&report, 1)["tools"], catalog("en-US")["tools"]);

    for transport in BOTH {
        let report = drive(
            ENGINE,
            &["--locale", "it-IT"],
            transport,
            json!([{ "list_tools": {} }]),
        );
        assert_eq!(
            step(&report, 0)["tools"],
            catalog("it-IT")["tools"],
            "{transport:?}: the server's --locale applies when the client names none"
        );
    }
}

#[test]
fn tools_call_returns_structured_content_and_the_same_json_as_text() {
    for transport in BOTH {
        let report = drive(
            ENGINE,
            &[],
            transport,
            json!([
                { "call": "weather__weather", "arguments": { "city": "Rome", "days": 2, "units": null } },
                { "call": "acme__book_appointment", "arguments": { "patient_id": "p-1", "date": "2026-12-01", "note": null } },
                { "call": "acme__find_orders", "arguments": { "customer_id": "c-12", "state": "shipped" } },
            ]),
        );
        for index in 0..2 {
            let result = step(&report, index);
            assert_eq!(result["isError"], false, "{transport:?}: {result}");
            let parsed: Value = serde_json::from_str(text(result)).unwrap();
            assert_eq!(result["structuredContent"], parsed, "{transport:?}");
        }
        assert_eq!(step(&report, 0)["structuredContent"]["city"], "Rome");
        assert_eq!(
            step(&report, 1)["structuredContent"]["id"],
            "bk-p-1-20261201"
        );
        // A list is not an object: text only, as the catalog gives it no outputSchema.
        let orders = step(&report, 2);
        assert_eq!(orders["isError"], false, "{orders}");
        assert!(orders.get("structuredContent").is_none(), "{orders}");
        assert_eq!(
            serde_json::from_str::<Value>(text(orders)).unwrap(),
            json!([{ "order_id": "o-1002", "state": "shipped" }])
        );
    }
}

#[test]
fn bad_arguments_and_a_tools_own_error_are_error_results_the_model_can_read() {
    for transport in BOTH {
        let report = drive(
            ENGINE,
            &[],
            transport,
            json!([
                { "call": "weather__weather", "arguments": { "city": "Rome", "days": "2", "units": null } },
                { "call": "weather__weather", "arguments": { "days": 2, "units": null } },
                { "call": "weather__weather", "arguments": { "city": "Atlantis", "days": 2, "units": null } },
                { "call": "acme__book_appointment", "arguments": { "patient_id": "p-1", "date": "01/12/2026", "note": null } },
            ]),
        );
        let expected = [
            r#"invalid arguments: `days`: invalid type: string "2", expected u8"#,
            "invalid arguments: missing key `city`: ",
            "unknown city `Atlantis`; known cities:",
            "`date` must be an ISO 8601 day such as `2026-12-01`, not `01/12/2026`",
        ];
        for (index, expected) in expected.iter().enumerate() {
            let result = step(&report, index);
            assert_eq!(result["isError"], true, "{transport:?}: {result}");
            assert!(result.get("structuredContent").is_none(), "{result}");
            let error: Value = serde_json::from_str(text(result)).unwrap();
            assert_eq!(error["error"]["kind"], "invalid_arguments", "{result}");
            let message = error["error"]["message"].as_str().unwrap();
            assert!(message.starts_with(expected), "{transport:?}: {message}");
        }
    }
}

#[test]
fn an_unknown_tool_and_an_unknown_method_are_json_rpc_errors() {
    for transport in BOTH {
        let report = drive(
            ENGINE,
            &[],
            transport,
            json!([
                { "call": "acme__no_such_tool", "arguments": {} },
                { "request": "tools/frobnicate" },
                { "call": "weather__weather", "arguments": { "city": "Rome", "days": 1, "units": null } },
            ]),
        );
        let unknown_tool = &step(&report, 0)["error"];
        assert_eq!(unknown_tool["code"], -32602, "{transport:?}: {report}");
        assert_eq!(
            unknown_tool["message"],
            "there is no tool named `acme__no_such_tool`; call one of the tools you were given, by its exact name"
        );
        let unknown_method = &step(&report, 1)["error"];
        assert_eq!(unknown_method["code"], -32601, "{transport:?}: {report}");
        assert_eq!(
            unknown_method["message"],
            "`tools/frobnicate` is not a method this server knows"
        );
        // The session goes on after both.
        assert_eq!(step(&report, 2)["isError"], false, "{transport:?}");
    }
}

#[test]
fn the_documented_client_configuration_serves_the_tools() {
    let section = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../engine-mcp/docs/clients.md"
    ))
    .expect("engine-mcp/docs/clients.md");
    let snippet = section
        .split_once("```json\n")
        .and_then(|(_, rest)| rest.split_once("```"))
        .expect("a JSON snippet")
        .0;
    let config: Value = serde_json::from_str(snippet).expect("the snippet is JSON");
    let server = &config["mcpServers"]["plugin-sdk-example"];
    assert_eq!(
        server["command"],
        "/path/to/plugin-sdk/target/release/engine"
    );
    // Secrets in the `env` block, named as the engine reads them.
    let env = server["env"].as_object().expect("an env block");
    assert!(
        env.keys().all(
            |name| name.starts_with(engine_core::config::SECRET_ENV_PREFIX)
                && name.split("__").count() == 3
        ),
        "{env:?}"
    );
    let args: Vec<&str> = server["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|arg| arg.as_str().unwrap())
        .collect();
    // The same binary, built here for tests, started as a host starts it: the snippet's
    // arguments and environment, in a directory of the host's choosing.
    assert_eq!(args[0], "mcp");
    let mut command = vec![ENGINE];
    command.extend_from_slice(&args);
    let report = test_support::mcp::run_client(json!({
        "server": { "stdio": command, "env": server["env"], "cwd": std::env::temp_dir() },
        "steps": [{ "list_tools": {} }],
    }));
    assert_eq!(step(&report, 0)["tools"], catalog("en-US")["tools"]);
}

#[test]
fn a_server_serves_one_agent_with_that_agents_grants() {
    // A fresh knowledge base for each run, in a configuration of its own.
    let dir = std::env::temp_dir().join(format!("engine-mcp-agent-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("engine.toml");
    std::fs::write(
        &config,
        format!(
            "data_dir = {:?}\n[agents.default]\n[agents.support]\nknowledge = \"write\"\n\
             [agents.forecaster]\ntools = [\"weather:weather\"]\n",
            dir.display().to_string()
        ),
    )
    .unwrap();
    let config = config.to_str().unwrap();
    for transport in BOTH {
        let default = drive(
            ENGINE,
            &["--config", config],
            transport,
            json!([{ "list_tools": {} }]),
        );
        let names = |report: &Value| -> Vec<String> {
            step(report, 0)["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|tool| tool["name"].as_str().unwrap().to_owned())
                .collect()
        };
        assert!(!names(&default).contains(&"notes__save_note".to_owned()));

        let note = format!("parking over {transport:?}");
        let support = drive(
            ENGINE,
            &["--config", config, "--agent", "support"],
            transport,
            json!([
                { "list_tools": {} },
                { "call": "notes__save_note", "arguments": { "name": format!("{transport:?}"), "text": note } },
                { "call": "notes__search_notes", "arguments": { "words": "parking" } },
                // State needs a conversation, and an MCP session is not one: the tool
                // is not offered, and a call of it is answered with why.
                { "call": "notes__remember", "arguments": { "name": "n", "text": "t" } },
            ]),
        );
        assert!(names(&support).contains(&"notes__save_note".to_owned()));
        assert_eq!(
            step(&support, 1)["structuredContent"],
            Value::Null,
            "a string output has no structured content"
        );
        assert_eq!(
            text(step(&support, 1)),
            format!("\"saved as {transport:?}.md\"")
        );
        assert!(
            text(step(&support, 2)).contains(&format!("{transport:?}.md")),
            "{support}"
        );
        assert!(!names(&support).contains(&"notes__remember".to_owned()));
        let outside = &step(&support, 3)["error"];
        assert_eq!(outside["code"], -32602, "{outside}");
        assert!(
            outside["message"]
                .as_str()
                .unwrap()
                .contains("`notes:remember` works only in a conversation (it reads the conversation's state, identity or files), and this call is in none: the agent offers it in conversations, not over MCP"),
            "{outside}"
        );
        // An agent that does not equip the tool says nothing of it: it is unknown.
        let forecaster = drive(
            ENGINE,
            &["--config", config, "--agent", "forecaster"],
            transport,
            json!([{ "call": "notes__remember", "arguments": { "name": "n", "text": "t" } }]),
        );
        let unknown = step(&forecaster, 0)["error"]["message"]
            .as_str()
            .unwrap_or_default();
        assert!(
            unknown.starts_with("there is no tool named `notes__remember`"),
            "{forecaster}"
        );
    }
}

#[test]
fn rmcp_logs_no_line_per_request_unless_rust_log_asks_for_it() {
    // An empty RUST_LOG is none (and keeps one set around the test from counting).
    for (levels, rmcp_lines) in [("", false), ("rmcp=info,info", true)] {
        let env = &[("RUST_LOG", levels)];
        let (served, url) = serve_with_env(ENGINE, &[], env);
        let steps = json!([{ "call": "weather__weather", "arguments": { "city": "Rome", "days": 1, "units": null } }]);
        let report = run_client_beside(
            json!({ "server": { "url": url, "headers": {} }, "steps": steps }),
            None,
        );
        assert!(report.to_string().contains("Rome"), "{report}");
        let stderr = served.stop();
        assert_eq!(
            stderr.contains("rmcp"),
            rmcp_lines,
            "RUST_LOG {levels:?}:\n{stderr}"
        );
    }
}

#[test]
fn the_image_is_named_by_its_own_package_to_mcp_clients_and_on_the_command_line() {
    for transport in BOTH {
        let report = drive(ENGINE, &[], transport, json!([]));
        assert_eq!(
            report["server"],
            json!({"name": "example-engine", "version": env!("CARGO_PKG_VERSION")}),
            "{transport:?}: {report}"
        );
    }
    let version = Command::new(ENGINE).arg("--version").output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&version.stdout),
        format!("example-engine {}\n", env!("CARGO_PKG_VERSION"))
    );
    let help = Command::new(ENGINE).arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.starts_with("An example engine built from engine-core and the example plugins\n\nUsage: engine [OPTIONS] <COMMAND>"),
        "{help}"
    );
}
