//! The emitted schemas: snapshots, the runtime strict check, and the OpenAI Agents SDK
//! oracle.

use crate::support::oracle::oracle;

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

fn snapshot_path(id: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("snapshots")
        .join(format!("{}.json", id.replace(':', "__")))
}

/// Compares every linked tool's input schema with `snapshots/<id>.json`.
/// `UPDATE_SNAPSHOTS=1` rewrites them (refused under CI); review the diff.
#[test]
fn input_schemas_match_their_snapshots() {
    let update = test_support::overwrite_requested("UPDATE_SNAPSHOTS");
    let mut mismatched = Vec::new();
    let mut compared = Vec::new();
    for tool in crate::support::tools() {
        let id = tool.id();
        let actual = serde_json::to_string_pretty(&(tool.input_schema)()).unwrap() + "\n";
        let path = snapshot_path(&id);
        if update {
            std::fs::write(&path, &actual).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(actual.as_str()) {
            mismatched.push(format!("{id} ({}):\n{actual}", path.display()));
        }
        compared.push(path);
    }
    // A snapshot that no linked tool is compared with is a tool that went away (or was
    // renamed): it is removed with the rest when they are rewritten, refused otherwise.
    let snapshots = Path::new(env!("CARGO_MANIFEST_DIR")).join("snapshots");
    for entry in std::fs::read_dir(&snapshots).unwrap() {
        let path = entry.unwrap().path();
        if !compared.contains(&path) {
            if update {
                std::fs::remove_file(&path).unwrap();
            } else {
                mismatched.push(format!("{}: no linked tool has it", path.display()));
            }
        }
    }
    assert!(
        mismatched.is_empty(),
        "schemas differ from their snapshots (UPDATE_SNAPSHOTS=1 rewrites them):\n{}",
        mismatched.join("\n")
    );
}

#[test]
fn every_linked_strict_schema_passes_the_runtime_check() {
    for tool in crate::support::tools() {
        assert!(tool.strict, "{} is strict", tool.id());
        let violations = plugin_sdk::engine::schema::check_strict((tool.input_schema)().as_value());
        assert!(violations.is_empty(), "{}: {violations:?}", tool.id());
    }
}

#[test]
fn schemas_have_no_schema_keyword_root_title_one_of_or_default() {
    for tool in crate::support::tools() {
        let schema = (tool.input_schema)().to_value();
        assert!(schema.get("title").is_none(), "{}", tool.id());
        let text = schema.to_string();
        for keyword in [
            "\"$schema\"",
            "\"oneOf\"",
            "\"default\"",
            "\"format\"",
            "\"title\"",
        ] {
            assert!(
                !text.contains(keyword),
                "{} has {keyword}: {text}",
                tool.id()
            );
        }
    }
}

fn has_ref(schema: &Value) -> bool {
    schema.to_string().contains("\"$ref\"")
}

#[test]
fn the_openai_agents_oracle_accepts_every_schema_unchanged() {
    let schemas: Vec<(String, Value)> = crate::support::tools()
        .iter()
        .map(|tool| (tool.id(), (tool.input_schema)().to_value()))
        .collect();
    for verdict in oracle(&schemas) {
        let id = verdict["id"].as_str().unwrap();
        let recursive = has_ref(&schemas.iter().find(|(i, _)| i == id).unwrap().1);
        let lenient = &verdict["lenient"];
        assert_eq!(lenient["accepted"], true, "{id}: {verdict}");
        assert_eq!(
            lenient["unchanged"], true,
            "{id} was rewritten by the oracle: {verdict}"
        );
        let strict = &verdict["strict"];
        if recursive {
            // With `_reject_open_objects=True` the oracle refuses any `$ref`, and a type
            // that contains itself needs one; OpenAI's API accepts it.
            assert_eq!(strict["accepted"], false, "{id}: {verdict}");
            assert!(
                strict["error"]
                    .as_str()
                    .unwrap()
                    .contains("reference whose target was not validated"),
                "{id}: {verdict}"
            );
        } else {
            assert_eq!(strict["accepted"], true, "{id}: {verdict}");
            assert_eq!(
                strict["unchanged"], true,
                "{id} was rewritten by the oracle: {verdict}"
            );
        }
    }
}

#[test]
fn the_oracle_rejects_what_strict_mode_forbids() {
    // The same oracle run must be able to fail: an open map and an omittable field.
    let open_map =
        serde_json::to_value(schemars::schema_for!(std::collections::HashMap<String, String>))
            .unwrap();
    let omittable = json!({
        "type": "object",
        "properties": { "a": { "type": "string" } },
        "required": [],
        "additionalProperties": false,
    });
    let verdicts = oracle(&[
        ("open_map".into(), open_map),
        ("omittable".into(), omittable),
    ]);
    assert_eq!(verdicts[0]["strict"]["accepted"], false, "{}", verdicts[0]);
    // Refused for the reason strict mode gives, not for any error at all.
    assert!(
        verdicts[0]["strict"]["error"]
            .as_str()
            .unwrap()
            .contains("permits undeclared properties"),
        "{}",
        verdicts[0]
    );
    assert_eq!(
        verdicts[1]["strict"]["unchanged"], false,
        "the oracle adds the missing `required`: {}",
        verdicts[1]
    );
}
