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
        })
    );
}

#[test]
fn the_report_says_which_variables_the_environment_sets_never_their_values() {
    let output = requirements("json", &[("WEATHER_UNITS", "imperial-secret")]);
    assert!(output.status.success(), "{output:?}");
    assert!(!String::from_utf8_lossy(&output.stdout).contains("imperial-secret"));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["env"]["WEATHER_UNITS"]["set_in_environment"], true);
    assert_eq!(
        report["env"]["ACME_CRM_TIMEOUT_SECS"]["set_in_environment"],
        false
    );
}

/// `engine check` in an environment of `env` only: how the process has each variable.
fn variables_at_start_up(env: &[(&str, &str)]) -> Vec<String> {
    let mut command = Command::new(env!("CARGO_BIN_EXE_engine"));
    command.arg("check").env_clear();
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().expect("the engine runs");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|line| line.starts_with("  env "))
        .map(|line| {
            line.split_whitespace()
                .skip(1)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

#[test]
fn the_engine_sets_each_default_the_environment_does_not_set_even_empty() {
    assert_eq!(
        variables_at_start_up(&[]),
        [
            "ACME_CRM_TIMEOUT_SECS \"10\", the plugins' default",
            "WEATHER_UNITS \"metric\", the plugins' default",
        ]
    );
    assert_eq!(
        variables_at_start_up(&[("WEATHER_UNITS", "imperial"), ("ACME_CRM_TIMEOUT_SECS", "")]),
        [
            "ACME_CRM_TIMEOUT_SECS set by the environment",
            "WEATHER_UNITS set by the environment",
        ]
    );
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
