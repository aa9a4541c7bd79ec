//! `new-image` writes an image crate with two example plugins; the crate builds, and the
//! image it builds is its own: its name, its plugins and nothing else, its configuration
//! checked against them, its release build checked as the example engine's is.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn new_image(out: &Path) -> Output {
    let plugins = workspace().join("examples/plugins");
    Command::new(env!("CARGO_BIN_EXE_new-image"))
        .args([
            "--name",
            "support-engine",
            "--about",
            "Acme's \"support\" engine",
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
        .output()
        .expect("new-image runs")
}

/// Cargo (or a script that runs it) in `dir`, building into `target`, without the
/// developer's engine variables.
fn cargo_like(program: &str, dir: &Path, target: &Path) -> Command {
    let mut command = Command::new(program);
    command.current_dir(dir).env("CARGO_TARGET_DIR", target);
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("ENGINE_") || name == "RUST_LOG" {
            command.env_remove(name);
        }
    }
    command
}

fn build(dir: &Path, target: &Path) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let built = cargo_like(&cargo, dir, target)
        .args(["build", "--offline", "--quiet"])
        .output()
        .unwrap();
    assert!(built.status.success(), "{}", text(&built.stderr));
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

/// The plugins the image's `tools` listing names, as `package version`.
fn plugins(image: &Path, dir: &Path) -> Vec<String> {
    text(&run(image, dir, &["tools"]).stdout)
        .lines()
        .filter_map(|line| {
            line.split_once(" (")?
                .1
                .split_once(", engine")
                .map(|(plugin, _)| plugin.to_owned())
        })
        .collect()
}

#[test]
fn a_scaffolded_image_builds_links_its_plugins_only_and_checks_its_configuration() {
    let out = workspace().join("target/scaffold-test/support-engine");
    let target = workspace().join("target/scaffold-test/target");
    let _ = std::fs::remove_dir_all(&out);
    let written = new_image(&out);
    assert!(written.status.success(), "{written:?}");
    for file in [
        "Cargo.toml",
        "Cargo.lock",
        "build.rs",
        "src/main.rs",
        "engine.toml",
        "Dockerfile",
        ".dockerignore",
    ] {
        assert!(out.join(file).is_file(), "{file} is missing");
    }
    let dockerfile = std::fs::read_to_string(out.join("Dockerfile")).unwrap();
    assert!(
        dockerfile
            .contains("RUN support-engine image requirements --format packages > /tmp/packages"),
        "{dockerfile}"
    );
    build(&out, &target);
    let image = target.join("debug/support-engine");

    assert_eq!(
        text(&run(&image, &out, &["--version"]).stdout),
        "support-engine 0.1.0\n"
    );
    let help = text(&run(&image, &out, &["--help"]).stdout);
    assert!(help.starts_with("Acme's \"support\" engine\n"), "{help}");
    assert_eq!(plugins(&image, &out), ["acme-crm 0.1.0", "weather 0.1.0"]);

    // Its configuration is checked against its plugins: the example passes, a tool of a
    // plugin it does not link does not.
    let checked = run(&image, &out, &["config", "check", "engine.toml"]);
    assert_eq!(
        text(&checked.stdout),
        "ok: the configuration has no problem with what this engine links\n",
        "{checked:?}"
    );
    std::fs::write(
        out.join("other.toml"),
        "[agents.a]\ntools = [\"weather:weather\", \"notes:remember\"]\n",
    )
    .unwrap();
    let refused = run(&image, &out, &["config", "check", "other.toml"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        text(&refused.stderr)
            .contains("`agents.a.tools` names `notes:remember`, which no linked plugin defines"),
        "{refused:?}"
    );
    let packages = run(
        &image,
        &out,
        &["image", "requirements", "--format", "packages"],
    );
    assert_eq!(text(&packages.stdout), "ca-certificates tzdata\n");

    // Removing a plugin is one edit, of Cargo.toml.
    let manifest = std::fs::read_to_string(out.join("Cargo.toml")).unwrap();
    assert!(manifest.contains("\nweather = { path = "), "{manifest}");
    let without_weather: String = manifest
        .lines()
        .filter(|line| !line.starts_with("weather = "))
        .map(|line| format!("{line}\n"))
        .collect();
    std::fs::write(out.join("Cargo.toml"), without_weather).unwrap();
    build(&out, &target);
    assert_eq!(plugins(&image, &out), ["acme-crm 0.1.0"]);
    let packages = run(
        &image,
        &out,
        &["image", "requirements", "--format", "packages"],
    );
    assert_eq!(text(&packages.stdout), "ca-certificates\n");

    // The release build (`lto = true`) still links every plugin: the check the example
    // engine gets.
    let checked = cargo_like("bash", &out, &target)
        .arg(workspace().join("scripts/check-release-engine"))
        .arg(&out)
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
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn a_directory_that_is_not_empty_is_refused() {
    let out = workspace().join("target/scaffold-test/not-empty");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("keep.txt"), "mine").unwrap();
    let refused = new_image(&out);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        text(&refused.stderr).contains("is not empty"),
        "{refused:?}"
    );
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 1);
    assert_eq!(
        std::fs::read_to_string(out.join("keep.txt")).unwrap(),
        "mine"
    );
    std::fs::remove_dir_all(&out).unwrap();
}
