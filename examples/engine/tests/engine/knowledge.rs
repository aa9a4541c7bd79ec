//! `engine knowledge`: what an operator does to an agent's documents, beside what the
//! agent's tools do to them, in the embedded store under `data_dir`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// A directory of this test's, with `engine.toml` (data under it) holding `config`.
fn configured(name: &str, config: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("engine-knowledge-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let data = dir.join("data");
    std::fs::write(
        dir.join("engine.toml"),
        format!("data_dir = {:?}\n{config}", data.display().to_string()),
    )
    .unwrap();
    dir
}

/// `engine --config <dir>/engine.toml --agent support <args>`, with nothing else of the
/// environment: its status, stdout and stderr.
fn engine(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    engine_as(dir, "support", args)
}

/// [`engine`] for `agent`.
fn engine_as(dir: &Path, agent: &str, args: &[&str]) -> (Option<i32>, String, String) {
    let output: Output = Command::new(env!("CARGO_BIN_EXE_engine"))
        .arg("--config")
        .arg(dir.join("engine.toml"))
        .args(["--agent", agent])
        .args(args)
        .env_clear()
        .output()
        .expect("the engine runs");
    (
        output.status.code(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

const AGENTS: &str =
    "[agents.support]\nknowledge = \"write\"\n[agents.sales]\nknowledge = \"read\"\n";

#[test]
fn an_operator_uploads_lists_a_page_at_a_time_deletes_and_wipes_beside_the_tools() {
    let dir = configured("operator", AGENTS);
    std::fs::write(dir.join("a.md"), "Refunds take five days.").unwrap();
    std::fs::write(dir.join("b.md"), "Parcels leave every morning.").unwrap();
    let (a, b) = (dir.join("a.md"), dir.join("b.md"));
    let (status, out, err) = engine(
        &dir,
        &[
            "knowledge",
            "upload",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--by",
            "ada",
        ],
    );
    assert_eq!(status, Some(0), "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("created ") && lines[0].ends_with("  a.md"),
        "{out}"
    );
    assert!(lines[1].ends_with("  b.md"), "{out}");
    // The plugin's tool at `write` writes its own document, and may not replace the
    // operator's.
    let save = |name: &str| {
        let arguments = format!(r#"{{"name": "{name}", "text": "from the tool"}}"#);
        engine(&dir, &["call", "notes__save_note", &arguments]).1
    };
    assert_eq!(save("c").trim(), "\"saved as c.md\"");
    assert_eq!(
        save("a").trim(),
        "\"not saved: not owned: another plugin or a person wrote it\""
    );
    // The tools find what the operator uploaded.
    let (_, found, _) = engine(
        &dir,
        &["call", "notes__search_notes", r#"{"words": "refunds"}"#],
    );
    assert!(found.contains("a.md: Refunds take five days."), "{found}");
    // A page of two, and the next after its cursor.
    let (status, page, more) = engine(&dir, &["knowledge", "list", "--limit", "2"]);
    assert_eq!(status, Some(0));
    let names: Vec<&str> = page
        .lines()
        .map(|line| line.split_whitespace().nth(1).unwrap())
        .collect();
    assert_eq!(names, ["a.md", "b.md"], "{page}");
    assert!(
        page.lines().next().unwrap().ends_with("operator:ada"),
        "{page}"
    );
    assert_eq!(more.trim(), "more follow: add --after 'b.md'");
    let (_, json, _) = engine(
        &dir,
        &["knowledge", "list", "--after", "b.md", "--format", "json"],
    );
    let json: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["next"], Value::Null, "{json}");
    let written = &json["documents"][0];
    assert_eq!(
        (
            &written["filename"],
            &written["origin"],
            &written["origin_ref"]
        ),
        (&"c.md".into(), &"plugin".into(), &"notes".into())
    );
    // The operator deletes the plugin's document; an unknown id is refused by name.
    let id = written["id"].as_i64().unwrap().to_string();
    let (status, out, _) = engine(&dir, &["knowledge", "delete", &id]);
    assert_eq!(
        (status, out.trim()),
        (Some(0), format!("deleted {id}  c.md").as_str())
    );
    let (status, _, err) = engine(&dir, &["knowledge", "delete", "999999"]);
    assert_eq!((status, err.trim()), (Some(1), "refused 999999: not found"));
    // Wiping asks for --yes, and touches only the agent named.
    let (status, _, err) = engine_as(&dir, "sales", &["knowledge", "upload", a.to_str().unwrap()]);
    assert_eq!(status, Some(0), "{err}");
    let (status, _, err) = engine(&dir, &["knowledge", "wipe"]);
    assert_eq!(status, Some(2), "{err}");
    let (status, out, _) = engine(&dir, &["knowledge", "wipe", "--yes"]);
    assert_eq!(
        (status, out.trim()),
        (Some(0), "wiped 2 documents of the agent `support`")
    );
    let (status, listed, _) = engine(&dir, &["knowledge", "list"]);
    assert_eq!((status, listed.as_str()), (Some(0), ""), "wiped");
    let (_, theirs, _) = engine_as(&dir, "sales", &["knowledge", "list"]);
    assert!(theirs.contains("a.md"), "{theirs}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_upload_with_a_file_it_cannot_take_stores_nothing_and_says_which() {
    let dir = configured(
        "refused",
        &format!("[knowledge]\nmax_document_bytes = 64\n{AGENTS}"),
    );
    let good = dir.join("good.md");
    std::fs::write(&good, "fine").unwrap();
    let binary = dir.join("binary.md");
    std::fs::write(&binary, [0xff, 0xfe, 0x00]).unwrap();
    let large = dir.join("large.md");
    std::fs::write(&large, "x".repeat(65)).unwrap();
    let missing = dir.join("missing.md");
    let path = |file: &Path| file.to_str().unwrap().to_owned();
    for (bad, says) in [
        (&binary, "is not UTF-8 text"),
        (&large, "is larger than a document may be, 64 bytes"),
        (&missing, "No such file"),
    ] {
        let (status, _, err) = engine(&dir, &["knowledge", "upload", &path(&good), &path(bad)]);
        assert_eq!(status, Some(1), "{err}");
        assert!(
            err.starts_with("nothing uploaded: ") && err.contains(says),
            "{err}"
        );
        assert!(err.contains(&path(bad)), "{err}");
    }
    let (status, listed, _) = engine(&dir, &["knowledge", "list"]);
    assert_eq!((status, listed.as_str()), (Some(0), ""), "nothing stored");
    // A name for two files is a usage error; so is no file.
    let (status, _, _) = engine(
        &dir,
        &[
            "knowledge",
            "upload",
            &path(&good),
            &path(&good),
            "--name",
            "x.md",
        ],
    );
    assert_eq!(status, Some(2));
    assert_eq!(engine(&dir, &["knowledge", "upload"]).0, Some(2));
    // One file under another name.
    let (status, out, _) = engine(
        &dir,
        &["knowledge", "upload", &path(&good), "--name", "policy.md"],
    );
    assert_eq!(status, Some(0));
    assert!(out.trim().ends_with("  policy.md"), "{out}");
    let (_, listed, _) = engine(&dir, &["knowledge", "list"]);
    let names: Vec<&str> = listed
        .lines()
        .map(|line| line.split_whitespace().nth(1).unwrap())
        .collect();
    assert_eq!(names, ["policy.md"], "the one upload, under its name");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn without_an_agent_that_grants_knowledge_there_is_no_store_to_reach() {
    let dir = configured("none", "[agents.support]\n");
    let (status, out, err) = engine(&dir, &["knowledge", "list"]);
    assert_eq!((status, out.as_str()), (Some(2), ""));
    assert!(err.contains("no agent grants knowledge"), "{err}");
    assert!(
        err.contains("[agents.support] knowledge = \"read\""),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
