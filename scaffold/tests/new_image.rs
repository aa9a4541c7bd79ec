//! `new-image` writes an image crate with two example plugins; the crate builds, and the
//! image it builds is its own: its name, its plugins and nothing else, its configuration
//! checked.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn new_image(out: &Path, extra: &[&str]) -> Output {
    let plugins = workspace().join("examples/plugins");
    Command::new(env!("CARGO_BIN_EXE_new-image"))
        .args([
            "--name",
            "support-engine",
            "--about",
            "Acme's support engine",
        ])
        .arg("--out")
        .arg(out)
        .arg(format!(
            "--plugin=acme-crm=path:{}",
            plugins.join("acme-crm").display()
        ))
        .arg(format!(
            "--plugin=weather=path:{}",
            plugins.join("weather").display()
        ))
        .args(extra)
        .output()
        .expect("new-image runs")
}

fn run(image: &Path, dir: &Path, args: &[&str]) -> Output {
    Command::new(image)
        .args(args)
        .current_dir(dir)
        .env_clear()
        .output()
        .expect("the image runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn a_scaffolded_image_builds_links_its_plugins_only_and_checks_its_configuration() {
    let out = workspace().join("target/scaffold-test/support-engine");
    let _ = std::fs::remove_dir_all(&out);
    let written = new_image(&out, &[]);
    assert!(written.status.success(), "{written:?}");
    for file in [
        "Cargo.toml",
        "build.rs",
        "src/main.rs",
        "engine.toml",
        "Dockerfile",
    ] {
        assert!(out.join(file).is_file(), "{file} is missing");
    }
    // The workspace's lock file: the same versions, and no download.
    std::fs::copy(workspace().join("Cargo.lock"), out.join("Cargo.lock")).unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let target = workspace().join("target/scaffold-test/target");
    let built = Command::new(cargo)
        .args(["build", "--offline", "--quiet"])
        .current_dir(&out)
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .unwrap();
    assert!(built.status.success(), "{}", text(&built.stderr));
    let image = target.join("debug/support-engine");

    let version = run(&image, &out, &["--version"]);
    assert_eq!(text(&version.stdout), "support-engine 0.1.0\n");
    let help = run(&image, &out, &["--help"]);
    assert!(
        text(&help.stdout).starts_with("Acme's support engine"),
        "{help:?}"
    );

    let checked = run(&image, &out, &["config", "check", "engine.toml"]);
    assert!(checked.status.success(), "{checked:?}");

    let tools = text(&run(&image, &out, &["tools"]).stdout);
    let plugins: Vec<&str> = tools
        .lines()
        .filter(|line| !line.starts_with(' ') && line.contains(" 0.1.0"))
        .map(|line| line.split(" (").nth(1).unwrap_or_default())
        .collect();
    assert_eq!(plugins.len(), 2, "{tools}");
    assert!(tools.contains("acme:book_appointment"), "{tools}");
    assert!(tools.contains("weather:weather"), "{tools}");
    assert!(
        !tools.contains("notes:") && !tools.contains("builtin:"),
        "{tools}"
    );

    let packages = run(
        &image,
        &out,
        &["image", "requirements", "--format", "packages"],
    );
    assert_eq!(text(&packages.stdout), "ca-certificates tzdata\n");

    // Removing a plugin is one edit, of Cargo.toml.
    let manifest = std::fs::read_to_string(out.join("Cargo.toml")).unwrap();
    let without_weather: String = manifest
        .lines()
        .filter(|line| !line.starts_with("weather = "))
        .map(|line| format!("{line}\n"))
        .collect();
    std::fs::write(out.join("Cargo.toml"), without_weather).unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let rebuilt = Command::new(cargo)
        .args(["build", "--offline", "--quiet"])
        .current_dir(&out)
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .unwrap();
    assert!(rebuilt.status.success(), "{}", text(&rebuilt.stderr));
    let tools = text(&run(&image, &out, &["tools"]).stdout);
    assert!(
        tools.contains("acme:book_appointment") && !tools.contains("weather:"),
        "{tools}"
    );

    // The release build (`lto = true`) still links every plugin: the check the example
    // engine gets.
    let checked = Command::new("bash")
        .arg(workspace().join("scripts/check-release-engine"))
        .arg(&out)
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .unwrap();
    assert!(checked.status.success(), "{}", text(&checked.stderr));
    let report = text(&checked.stdout);
    assert!(report.starts_with("ok: 1 plugins, 3 tools"), "{report}");
    assert!(
        report.ends_with(
            "release support-engine with LTO: the same tools and hooks as the debug build\n"
        ),
        "{report}"
    );
}

#[test]
fn a_directory_that_is_not_empty_is_refused() {
    let out = workspace().join("target/scaffold-test/not-empty");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("keep.txt"), "mine").unwrap();
    let refused = new_image(&out, &[]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        text(&refused.stderr).contains("is not empty"),
        "{refused:?}"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("keep.txt")).unwrap(),
        "mine"
    );
}
