//! `engine plugins`: the linked plugins' catalogue (acme declares every catalogue field,
//! weather none), without a configuration.

use std::path::PathBuf;
use std::process::Command;

use base64::Engine as _;
use serde_json::{json, Value};

/// `engine plugins` with `args`, in an empty environment: what it printed.
fn plugins(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_engine"))
        .arg("plugins")
        .args(args)
        .env_clear()
        .output()
        .expect("the engine runs");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}

/// A file of the acme plugin's catalogue, as the repository holds it.
fn acme_file(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../plugins/acme-crm/catalogue")
        .join(name);
    std::fs::read(path).unwrap()
}

#[test]
fn the_json_catalogue_gives_every_language_and_the_icon_as_the_crate_holds_it() {
    let catalogue: Value = serde_json::from_str(&plugins(&["--format", "json"])).unwrap();
    let by_namespace = |namespace: &str| {
        catalogue
            .as_array()
            .unwrap()
            .iter()
            .find(|plugin| plugin["namespace"] == namespace)
            .unwrap_or_else(|| panic!("no plugin `{namespace}` in {catalogue:#}"))
            .clone()
    };
    let acme = by_namespace("acme");
    let text = |name| String::from_utf8(acme_file(name)).unwrap();
    assert_eq!(
        acme["long_description"],
        json!({ "en-US": text("about.md"), "it-IT": text("about.it.md") })
    );
    assert_eq!(
        acme["category"],
        json!({ "en-US": "Back office", "it-IT": "Gestionale" })
    );
    assert_eq!(acme["publisher"], "Acme Inc.");
    assert_eq!(
        acme["documentation_url"],
        "https://docs.acme.example/agent-plugin"
    );
    assert_eq!(acme["display_name"], "Acme");
    let icon = &acme["icon"];
    assert_eq!(icon["media_type"], "image/svg+xml");
    let data_url = icon["data_url"].as_str().unwrap();
    let encoded = data_url
        .strip_prefix("data:image/svg+xml;base64,")
        .unwrap_or_else(|| panic!("not an SVG data URL: {data_url}"));
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .unwrap();
    assert_eq!(bytes, acme_file("icon.svg"));
    assert_eq!(icon["size"], bytes.len());
    let tools: Vec<&str> = acme["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["id"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"acme:book_appointment"), "{tools:?}");
    // By namespace, and what each brings by name: link order changes between builds.
    let namespaces: Vec<&str> = catalogue
        .as_array()
        .unwrap()
        .iter()
        .map(|plugin| plugin["namespace"].as_str().unwrap())
        .collect();
    let mut sorted = namespaces.clone();
    sorted.sort_unstable();
    assert_eq!(namespaces, sorted);
    let mut tools_sorted = tools.clone();
    tools_sorted.sort_unstable();
    assert_eq!(tools, tools_sorted);
    let guard = by_namespace("guard");
    assert_eq!(
        guard["hooks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|hook| hook["id"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["guard:blank_message", "guard:dirty_output_guard"]
    );
    assert_eq!(by_namespace("webhook")["channels"], json!(["webhook"]));
    // A plugin without catalogue fields has none, not empty ones.
    let weather = by_namespace("weather");
    for field in [
        "long_description",
        "icon",
        "category",
        "publisher",
        "documentation_url",
    ] {
        assert_eq!(weather[field], Value::Null, "{field}");
    }
}

#[test]
fn the_text_catalogue_is_the_default_in_english_one_plugin_apart_from_the_next() {
    let printed = plugins(&[]);
    assert!(
        printed.starts_with("Acme (acme-crm 0.1.0, by Acme Inc.)\n  category Back office\n"),
        "{printed}"
    );
    assert!(
        printed.contains("\n\nWeather (weather 0.1.0)\n"),
        "{printed}"
    );
    assert!(printed.contains("\n  channels webhook\n"), "{printed}");
}

#[test]
fn the_text_catalogue_reads_in_the_readers_language() {
    let printed = plugins(&["--locale", "it-IT"]);
    // Acme's entry: its first line, and the indented or blank ones after it.
    let mut lines = printed
        .lines()
        .skip_while(|line| !line.starts_with("Acme ("));
    let first = lines
        .next()
        .unwrap_or_else(|| panic!("no acme plugin in:\n{printed}"));
    let rest: Vec<&str> = lines
        .take_while(|line| line.is_empty() || line.starts_with(' '))
        .collect();
    let acme = format!("{first}\n{}", rest.join("\n"));
    assert_eq!(first, "Acme (acme-crm 0.1.0, by Acme Inc.)");
    assert!(acme.contains("\n  category Gestionale\n"), "{acme}");
    assert!(
        acme.contains("\n  about    Stato degli ordini e appuntamenti dal gestionale Acme.\n"),
        "{acme}"
    );
    assert!(
        acme.contains("\n    Il gestionale Acme, dall'agente: dove si trova un ordine"),
        "{acme}"
    );
    assert!(
        acme.contains("\n  docs     https://docs.acme.example/agent-plugin\n"),
        "{acme}"
    );
    assert!(acme.contains("\n  tools    acme:"), "{acme}");
}
