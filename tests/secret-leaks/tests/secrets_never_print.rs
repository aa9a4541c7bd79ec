//! No secret reaches anything the engine process writes, in clear or escaped: the test
//! engine runs as a process with secrets that need escaping, its tool panics with them,
//! fails with them, audits and logs them, a configuration quotes them, and stdout and
//! stderr of every run are searched for each secret in every form.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::process::{Command, Output};

use serde_json::{json, Value};
use test_support::mcp::{drive_with_stderr, BOTH};

const ENGINE: &str = env!("CARGO_BIN_EXE_secret-leaks");

/// Quotes, a backslash and an apostrophe.
const QUOTED: &str = r#"q"uo\ted'-4242"#;
/// Control characters: SOH, a tab, a newline, and BEL and ESC (which the log formatter
/// spells `\x07` and `\x1b`).
const CONTROL: &str = "c\u{1}on\ttrol\u{7}\u{1b}\nline-4242";
/// Not ASCII, with a zero-width space that `Debug` escapes as `\u{200b}`.
const UNICODE: &str = "ünï-日本-\u{200b}-4242";

/// Every secret ends with this: a form the redactor missed would still show it.
const MARK: &str = "4242";

/// The test engine with the three secrets in its environment, and `args`.
fn engine(args: &[&str]) -> Command {
    let mut command = Command::new(ENGINE);
    command
        .args(args)
        .env("ENGINE_SECRET__default__quoted", QUOTED)
        .env("ENGINE_SECRET__default__control", CONTROL)
        .env("ENGINE_SECRET__default__unicode", UNICODE);
    command
}

fn run(mut command: Command) -> Output {
    command.output().expect("the test engine runs")
}

/// Everything the process wrote.
fn everything(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The forms a secret takes once escaped: JSON (also ASCII-only), `Debug`, and each of
/// those escaped again.
fn forms(secret: &str) -> Vec<String> {
    let inner = |quoted: String| quoted[1..quoted.len() - 1].to_owned();
    let json = inner(serde_json::to_string(secret).unwrap());
    let debug = inner(format!("{secret:?}"));
    let ascii_json: String = json
        .chars()
        .flat_map(|c| {
            if c.is_ascii() {
                vec![c.to_string()]
            } else {
                c.encode_utf16(&mut [0; 2])
                    .iter()
                    .map(|unit| format!("\\u{unit:04x}"))
                    .collect()
            }
        })
        .collect();
    vec![
        secret.to_owned(),
        inner(serde_json::to_string(&json).unwrap()),
        inner(format!("{debug:?}")),
        inner(serde_json::to_string(&debug).unwrap()),
        inner(format!("{json:?}")),
        json,
        debug,
        ascii_json,
    ]
}

/// Fails if `output` shows any secret in any form, or the mark they share.
fn assert_no_secret(what: &str, output: &Output) {
    let text = everything(output);
    for secret in [QUOTED, CONTROL, UNICODE] {
        for form in forms(secret) {
            assert!(!text.contains(&form), "{what} printed {form:?}:\n{text}");
        }
    }
    assert!(
        !text.contains(MARK),
        "{what} printed part of a secret:\n{text}"
    );
}

fn leak(way: &str) -> Output {
    let output = run(engine(&[
        "call",
        "leaks__leak",
        &format!(r#"{{"way": "{way}"}}"#),
    ]));
    assert_no_secret(way, &output);
    output
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn a_panic_with_the_secrets_prints_them_redacted_as_written_and_debug_formatted() {
    for way in ["panic", "debug_panic"] {
        let output = leak(way);
        assert_eq!(output.status.code(), Some(1), "{output:?}");
        let log = stderr(&output);
        // The panic hook's report, and the engine's log line of the panic.
        assert!(log.contains("panicked at"), "{way}: {log}");
        assert!(log.contains("leaked by a panic: "), "{way}: {log}");
        assert!(log.contains("[REDACTED]"), "{way}: {log}");
    }
}

#[test]
fn a_tool_error_quoting_the_secrets_reaches_the_model_redacted() {
    let output = leak("error");
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let error: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        error["error"]["message"],
        r#"leaked by an error: [REDACTED] [REDACTED] [REDACTED] ["[REDACTED]", "[REDACTED]", "[REDACTED]"]"#
    );
}

#[test]
fn an_output_quoting_the_secrets_reaches_the_model_redacted() {
    let output = leak("output");
    assert!(output.status.success(), "{output:?}");
    let answer: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        answer,
        r#"leaked by an output: [REDACTED] [REDACTED] [REDACTED] ["[REDACTED]", "[REDACTED]", "[REDACTED]"]"#
    );
}

#[test]
fn audit_records_and_log_lines_quoting_the_secrets_are_redacted() {
    let audited = leak("audit");
    assert!(audited.status.success(), "{audited:?}");
    let log = stderr(&audited);
    assert!(
        log.contains("leaked by an audit event: [REDACTED] [REDACTED] [REDACTED]"),
        "{log}"
    );
    assert!(
        log.contains(r#"{"secrets":["[REDACTED]","[REDACTED]","[REDACTED]"]"#),
        "{log}"
    );

    let logged = leak("log");
    assert!(logged.status.success(), "{logged:?}");
    let log = stderr(&logged);
    assert_eq!(
        log.matches("leaked by a log line: [REDACTED]").count(),
        3,
        "{log}"
    );
}

/// Writes `text` to a configuration file of its own, and answers its path.
fn config_file(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("secret-leaks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

/// Runs `tools` with `text` as the configuration.
fn with_config(name: &str, text: &str) -> Output {
    run(engine(&["--config", &config_file(name, text), "tools"]))
}

/// `secret` as a TOML string.
fn toml(secret: &str) -> String {
    // JSON's escapes (`\"`, `\\`, `\n`, `\u0001`) are TOML's too.
    serde_json::to_string(secret).unwrap()
}

#[test]
fn a_bad_configuration_is_refused_without_quoting_a_secret() {
    for (name, text) in [
        // A secret left unquoted: a syntax error on its line.
        (
            "unquoted.toml",
            "[agents.default]\nsecrets = { quoted = q-unquoted-4242 }\n".to_owned(),
        ),
        // A secret of the file where a value of another kind belongs: serde's message
        // quotes the value.
        (
            "misplaced.toml",
            format!(
                "[agents.default]\nsecrets = {{ quoted = {} }}\nknowledge = {}\n",
                toml(QUOTED),
                toml(QUOTED)
            ),
        ),
        // A secret of the environment pasted into the file.
        (
            "pasted.toml",
            format!("[agents.default]\nknowledge = {}\n", toml(UNICODE)),
        ),
    ] {
        let output = with_config(name, &text);
        assert_eq!(output.status.code(), Some(1), "{name}: {output:?}");
        let log = stderr(&output);
        assert!(
            log.starts_with("the engine refused to start: ") && log.contains(name),
            "{name}: {log}"
        );
        assert!(log.contains("line "), "{name} says where: {log}");
        assert_no_secret(name, &output);
    }
}

#[test]
fn secret_variables_leave_the_environment_and_a_non_utf8_variable_is_skipped_with_a_warning() {
    let mut command = engine(&["call", "leaks__secret_variables", "{}"]);
    command
        .env(OsStr::from_bytes(b"NOT_UTF8_\xff"), "value")
        .env(
            "ENGINE_SECRET__default__binary",
            OsStr::from_bytes(b"\xfe-4242"),
        );
    let output = run(command);
    assert!(output.status.success(), "{output:?}");
    let variables: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(variables, serde_json::json!({ "names": [] }));
    let log = stderr(&output);
    for name in ["NOT_UTF8_\u{fffd}", "ENGINE_SECRET__default__binary"] {
        assert!(
            log.contains(&format!(
                "skipped an environment variable whose name or value is not UTF-8 variable={name}"
            )),
            "no warning for {name}: {log}"
        );
    }
    assert!(!log.contains(MARK), "{log}");
}

#[test]
fn over_mcp_a_tool_error_and_a_panic_reach_the_client_redacted() {
    // The secrets come from the file here: the client starts the engine (over stdio).
    let config = config_file(
        "mcp.toml",
        &format!(
            "[agents.default]\nsecrets = {{ quoted = {}, control = {}, unicode = {} }}\n",
            toml(QUOTED),
            toml(CONTROL),
            toml(UNICODE)
        ),
    );
    for transport in BOTH {
        let (report, engine_stderr) = drive_with_stderr(
            ENGINE,
            &["--config", &config],
            transport,
            json!([
                { "call": "leaks__leak", "arguments": { "way": "error" } },
                { "call": "leaks__leak", "arguments": { "way": "panic" } },
            ]),
        );
        // The panic hook and the log wrote to the engine's stderr: redacted there too.
        assert!(
            engine_stderr.contains("panicked at"),
            "{transport:?}: {engine_stderr}"
        );
        for secret in [QUOTED, CONTROL, UNICODE] {
            for form in forms(secret) {
                assert!(
                    !engine_stderr.contains(&form),
                    "{transport:?}: the engine printed {form:?}:\n{engine_stderr}"
                );
            }
        }
        assert!(
            !engine_stderr.contains(MARK),
            "{transport:?}: {engine_stderr}"
        );
        let error_of = |step: usize| -> Value {
            let result = &report["steps"][step];
            assert_eq!(result["isError"], true, "{transport:?}: {result}");
            serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap()
        };
        assert_eq!(
            error_of(0)["error"]["message"],
            r#"leaked by an error: [REDACTED] [REDACTED] [REDACTED] ["[REDACTED]", "[REDACTED]", "[REDACTED]"]"#,
            "{transport:?}"
        );
        assert_eq!(error_of(1)["error"]["kind"], "panicked", "{transport:?}");
        let text = report.to_string();
        assert!(!text.contains(MARK), "{transport:?}: {text}");
    }
}
