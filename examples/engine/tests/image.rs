//! `engine image requirements`: the union of the linked plugins' `system` blocks (acme
//! and weather declare one), as JSON and as Dockerfile lines, and each variable's value
//! as the engine runs with it.

use std::process::{Command, Output};

use serde_json::{json, Value};

fn requirements(format: &str, env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_engine"));
    command
        .args(["image", "requirements", "--format", format])
        .env_clear();
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().expect("the engine runs")
}

#[test]
fn the_union_of_the_linked_plugins_blocks_names_who_needs_each_package() {
    let output = requirements("json", &[]);
    assert!(output.status.success(), "{output:?}");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        report["debian"],
        json!({
            "ca-certificates": ["acme-crm 0.1.0", "weather 0.1.0"],
            "tzdata": ["weather 0.1.0"],
        })
    );
    assert_eq!(
        report["env"]["WEATHER_UNITS"],
        json!({
            "default": "metric",
            "plugins": ["weather 0.1.0"],
            "set_in_environment": false,
            "value": "metric",
        })
    );
}

#[test]
fn a_value_the_environment_sets_wins_over_the_default_even_empty() {
    let output = requirements(
        "json",
        &[("WEATHER_UNITS", "imperial"), ("ACME_CRM_TIMEOUT_SECS", "")],
    );
    assert!(output.status.success(), "{output:?}");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["env"]["WEATHER_UNITS"]["value"], "imperial");
    assert_eq!(report["env"]["WEATHER_UNITS"]["set_in_environment"], true);
    assert_eq!(report["env"]["ACME_CRM_TIMEOUT_SECS"]["value"], "");
    assert_eq!(report["env"]["ACME_CRM_TIMEOUT_SECS"]["default"], "10");
}

#[test]
fn dockerfile_lines_install_the_packages_and_set_the_defaults() {
    let output = requirements("dockerfile", &[]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "# The linked plugins' system requirements.\n\
         RUN apt-get update \\\n && apt-get install -y --no-install-recommends ca-certificates tzdata \\\n && rm -rf /var/lib/apt/lists/*\n\
         ENV ACME_CRM_TIMEOUT_SECS=\"10\"\n\
         ENV WEATHER_UNITS=\"metric\"\n"
    );
}

#[test]
fn packages_come_on_one_line_for_apt_get() {
    let output = requirements("packages", &[]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "ca-certificates tzdata\n"
    );
}
