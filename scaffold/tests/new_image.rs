//! `new-image` writes an image crate with the example engine's plugins; the crate builds,
//! and the image it builds is its own: its name, its plugins and nothing else, its
//! configuration checked against them, its release (LTO) build keeping every plugin it
//! links.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The workspace's directory, without `..` (as the scaffold writes the example engine's
/// path), so that the image's plugins are the packages this workspace built.
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap()
}

/// This workspace's target directory, which the image builds into: with the example
/// engine's lock file, profile and paths, its dependencies are the ones the workspace
/// builds (`cargo build --release -p example-engine` there finds them built, and the other way
/// round).
fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("target"))
}

/// The example engine's plugins, by crate name and directory below this workspace.
const PLUGINS: [(&str, &str); 8] = [
    ("acme-crm", "examples/plugins/acme-crm"),
    ("calendar", "examples/plugins/calendar"),
    ("contacts", "examples/plugins/contacts"),
    ("engine-builtins", "engine-builtins"),
    ("guard", "examples/plugins/guard"),
    ("notes", "examples/plugins/notes"),
    ("weather", "examples/plugins/weather"),
    ("webhook", "examples/plugins/webhook"),
];

fn new_image(out: &Path, plugins: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_new-image"));
    command
        .args([
            "--name",
            "support-engine",
            "--about",
            "Acme's \"support\" engine",
        ])
        .arg("--out")
        .arg(out);
    for (name, dir) in plugins {
        command.arg(format!(
            "--plugin={name}=path:{}",
            workspace().join(dir).display()
        ));
    }
    command.output().expect("new-image runs")
}

/// `cargo ARGS` in the image's directory `dir`, into this workspace's target directory,
/// without the developer's engine variables.
fn cargo(dir: &Path, args: &[&str]) -> Output {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target_dir())
        .args(args);
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("ENGINE_") || name == "RUST_LOG" {
            command.env_remove(name);
        }
    }
    let output = command.output().unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    output
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

/// The image's build script, from the JSON messages of the build that compiled it.
fn build_script(built: &Output) -> PathBuf {
    text(&built.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find(|message| {
            message["reason"] == "compiler-artifact"
                && message["target"]["kind"] == serde_json::json!(["custom-build"])
                && message["package_id"]
                    .as_str()
                    .is_some_and(|id| id.contains("support-engine"))
        })
        .and_then(|message| message["filenames"][0].as_str().map(PathBuf::from))
        .expect("the build compiled the image's build script")
}

/// The `use` lines the image's build script writes for the manifest in `dir`: what its
/// `main.rs` links. Run as cargo runs it, without a build.
fn linked_by_build_script(script: &Path, dir: &Path) -> String {
    let out_dir = dir.join("out");
    std::fs::create_dir_all(&out_dir).unwrap();
    let ran = Command::new(script)
        .env("CARGO_MANIFEST_DIR", dir)
        .env("OUT_DIR", &out_dir)
        .output()
        .unwrap();
    assert!(ran.status.success(), "{ran:?}");
    std::fs::read_to_string(out_dir.join("plugins.rs")).unwrap()
}

#[test]
fn a_scaffolded_image_builds_links_its_plugins_only_and_checks_its_configuration() {
    let out = target_dir().join(format!(
        "scaffold-test/support-engine-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&out);
    let written = new_image(&out, &PLUGINS);
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
    // Its data in a volume, at the absolute path its configuration names there.
    let engine_toml = std::fs::read_to_string(out.join("engine.toml")).unwrap();
    assert!(
        engine_toml.contains("\ndata_dir = \"data\"\n"),
        "{engine_toml}"
    );
    let volume = "RUN mkdir -p /var/lib/support-engine \\\n \
         && chown engine /var/lib/support-engine \\\n \
         && sed -i '1,/^\\[/ s|^data_dir = .*|data_dir = \"/var/lib/support-engine\"|' /etc/support-engine/engine.toml \\\n \
         && grep -qx 'data_dir = \"/var/lib/support-engine\"' /etc/support-engine/engine.toml\n\
         VOLUME /var/lib/support-engine\n\
         USER engine\n";
    assert!(
        dockerfile.contains(volume),
        "{volume} is missing: {dockerfile}"
    );
    // The workspace's own release profile, so that the build below shares its graph.
    let manifest = std::fs::read_to_string(out.join("Cargo.toml")).unwrap();
    let workspace_manifest = std::fs::read_to_string(workspace().join("Cargo.toml")).unwrap();
    let release = "[profile.release]\nlto = true\n";
    assert!(manifest.ends_with(release), "{manifest}");
    assert!(workspace_manifest.contains(release), "{workspace_manifest}");

    // A release build, as an image ships (`lto = true`): the run's one LTO build. With
    // the example engine's plugins it is the example engine under another name, so its
    // listing must be the debug example engine's, which the tests ran: the linker kept
    // every plugin, tool, hook, action and channel.
    let built = cargo(
        &out,
        &[
            "build",
            "--release",
            "--offline",
            "--quiet",
            "--message-format=json",
        ],
    );
    // It builds the backends it names (the scaffold's default: SQLite and HTTP), as the
    // `engine` crate's features, and no other: PostgreSQL's, which the example engine
    // links, is not in its graph. (rusqlite: a registry package that must be there, so
    // that a change of Cargo's package ids cannot make the absent ones pass unseen.)
    let graph = built_packages(&text(&built.stdout));
    assert_eq!(
        graph.get("engine").map(Vec::as_slice),
        Some(["http".to_owned(), "sqlite".to_owned()].as_slice()),
        "the `engine` crate's features"
    );
    for (package, built_here) in [
        ("engine-sqlite", true),
        ("rusqlite", true),
        ("engine-postgres", false),
        ("tokio-postgres", false),
    ] {
        assert_eq!(
            graph.contains_key(package),
            built_here,
            "{package} is {}in the image's build: {:?}",
            if built_here { "not " } else { "" },
            graph.keys()
        );
    }
    let image = target_dir().join("release/support-engine");
    let debug_engine = target_dir().join("debug/engine");
    assert!(
        debug_engine.is_file(),
        "{} is missing: the workspace's test build makes it (bash scripts/test)",
        debug_engine.display()
    );
    let listed = text(&run(&image, &out, &["tools"]).stdout);
    assert_eq!(
        listed,
        text(&run(&debug_engine, &out, &["tools"]).stdout),
        "the release (LTO) image lists other plugins, tools or hooks than the debug example engine"
    );
    let checked = run(&image, &out, &["check"]);
    assert!(
        checked.status.success() && text(&checked.stdout).starts_with("ok: 8 plugins, "),
        "{checked:?}"
    );

    assert_eq!(
        text(&run(&image, &out, &["--version"]).stdout),
        "support-engine 0.1.0\n"
    );
    let help = text(&run(&image, &out, &["--help"]).stdout);
    assert!(help.starts_with("Acme's \"support\" engine\n"), "{help}");
    let mut versions: Vec<String> = PLUGINS
        .iter()
        .map(|(name, _)| format!("{name} 0.1.0"))
        .collect();
    versions.sort();
    let mut listed = plugins(&image, &out);
    listed.sort();
    assert_eq!(listed, versions);

    // Its configuration is checked against its plugins: the example passes, a tool no
    // plugin it links defines does not.
    let checked = run(&image, &out, &["config", "check", "engine.toml"]);
    assert_eq!(
        text(&checked.stdout),
        "ok: the configuration has no problem with what this engine links\n",
        "{checked:?}"
    );
    std::fs::write(
        out.join("other.toml"),
        "[agents.a]\ntools = [\"weather:weather\", \"nowhere:nothing\"]\n",
    )
    .unwrap();
    let refused = run(&image, &out, &["config", "check", "other.toml"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        text(&refused.stderr)
            .contains("`agents.a.tools` names `nowhere:nothing`, which no linked plugin defines"),
        "{refused:?}"
    );
    let packages = run(
        &image,
        &out,
        &["image", "requirements", "--format", "packages"],
    );
    assert_eq!(text(&packages.stdout), "ca-certificates tzdata\n");

    // Removing a plugin is one edit, of Cargo.toml: the build script then names one
    // plugin fewer, and `main.rs` links what it names (as the listing above showed for
    // all eight). Its build script is run on the edited manifest as cargo would run it:
    // a second LTO build would only repeat the first's link, for minutes.
    let script = build_script(&built);
    let uses: String = PLUGINS
        .iter()
        .map(|(name, _)| format!("use {} as _;\n", name.replace('-', "_")))
        .collect();
    assert_eq!(linked_by_build_script(&script, &out), uses);
    assert!(manifest.contains("\nweather = { path = "), "{manifest}");
    let without_weather: String = manifest
        .lines()
        .filter(|line| !line.starts_with("weather = "))
        .map(|line| format!("{line}\n"))
        .collect();
    std::fs::write(out.join("Cargo.toml"), without_weather).unwrap();
    assert_eq!(
        linked_by_build_script(&script, &out),
        uses.replace("use weather as _;\n", "")
    );
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn a_directory_that_is_not_empty_is_refused() {
    let out = target_dir().join(format!("scaffold-test/not-empty-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("keep.txt"), "mine").unwrap();
    let refused = new_image(&out, &PLUGINS[..1]);
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

/// The packages a build compiled, by name, each with the features it was built with
/// (sorted), from Cargo's `--message-format=json` lines.
fn built_packages(messages: &str) -> std::collections::BTreeMap<String, Vec<String>> {
    messages
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|message| message["reason"] == "compiler-artifact")
        .filter_map(|message| {
            // `path+file:///dir/name#0.1.0`, or `...#name@0.1.0` where the fragment
            // names the package (a registry's, or a path whose directory is named
            // otherwise).
            let (url, fragment) = message["package_id"].as_str()?.rsplit_once('#')?;
            let name = match fragment.split_once('@') {
                Some((name, _)) => name,
                None => url.rsplit('/').next()?,
            };
            let mut features: Vec<String> = message["features"]
                .as_array()?
                .iter()
                .filter_map(|feature| Some(feature.as_str()?.to_owned()))
                .collect();
            features.sort();
            Some((name.to_owned(), features))
        })
        .collect()
}
