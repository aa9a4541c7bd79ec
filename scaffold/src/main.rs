//! `new-image`: writes an engine image crate that links the plugin crates you choose.
//!
//! ```sh
//! cargo run -p engine-scaffold -- --name support-engine --out ../support-engine \
//!     --plugin acme-crm=path:examples/plugins/acme-crm --plugin weather@0.1 \
//!     --plugin notes=git:https://github.com/acme/notes-plugin
//! ```
//!
//! The crate's Cargo.toml lists the plugins as its dependencies, and its build script
//! names each once in `main.rs`: adding or removing a plugin later is one edit of
//! Cargo.toml. Beside them: an example `engine.toml` and a Dockerfile whose runtime stage
//! installs what the plugins declare in `plugin! { system }`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;

#[derive(Parser)]
#[command(about = "Write an engine image crate that links the plugin crates you choose")]
struct Args {
    /// The image's name: its package and binary (lowercase letters, digits and `-`).
    #[arg(long, value_parser = image_name)]
    name: String,
    /// Where to write it; the directory must not exist or be empty.
    #[arg(long)]
    out: PathBuf,
    /// A plugin crate: `NAME@VERSION` from the registry, `NAME=path:DIR`, or
    /// `NAME=git:URL` (optionally `#REV`). Repeat for each.
    #[arg(long = "plugin", value_name = "SPEC", value_parser = Plugin::parse, required = true)]
    plugins: Vec<Plugin>,
    /// Where the engine comes from: the directory of its workspace (`path:DIR`, which
    /// holds `engine/` and `engine-cli/`) or its Git repository (`git:URL[#REV]`);
    /// default: this workspace.
    #[arg(long, value_parser = engine_source)]
    engine: Option<Source>,
    /// A backend the image opens its configured parts with: `sqlite` (conversations and
    /// knowledge under the data directory), `postgres` (every store on one PostgreSQL,
    /// for replicas), `http` (model providers and the tools' gateway). Repeat for each;
    /// default: sqlite and http. An image opens only the backends it names, and builds
    /// the SQLite and PostgreSQL drivers only when named (HTTP client code is in every
    /// image: the external tools' MCP client uses it).
    #[arg(long = "backend", value_name = "BACKEND", value_enum)]
    backends: Vec<Backend>,
    /// What the image is, in one sentence (`--help` starts with it).
    #[arg(long, default_value = "An engine image")]
    about: String,
}

/// A backend: a feature of the `engine` crate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
enum Backend {
    Sqlite,
    Postgres,
    Http,
}

impl Backend {
    fn feature(self) -> &'static str {
        match self {
            Self::Sqlite => "sqlite",
            Self::Postgres => "postgres",
            Self::Http => "http",
        }
    }
}

/// A plugin dependency.
#[derive(Clone, Debug, PartialEq)]
struct Plugin {
    name: String,
    source: Source,
}

/// Where a dependency comes from.
#[derive(Clone, Debug, PartialEq)]
enum Source {
    Registry(String),
    Path(PathBuf),
    Git { url: String, rev: Option<String> },
}

impl Plugin {
    fn parse(spec: &str) -> Result<Self, String> {
        let (name, source) = match spec.split_once('=') {
            Some((name, source)) => (name, Source::parse(source)?),
            None => match spec.split_once('@') {
                Some((name, version)) if !version.is_empty() => {
                    (name, Source::Registry(version.to_owned()))
                }
                _ => {
                    return Err(format!(
                        "`{spec}` names no version or source: write NAME@VERSION, NAME=path:DIR or NAME=git:URL"
                    ))
                }
            },
        };
        crate_name(name)?;
        if let Source::Path(dir) = &source {
            check_plugin_crate(name, dir)?;
        }
        Ok(Self {
            name: name.to_owned(),
            source,
        })
    }
}

/// `--engine`'s source: a path must be the engine's workspace, holding the `engine` and
/// `engine-cli` packages (a path to `engine-cli` itself was the flag's meaning before the
/// `engine` crate).
fn engine_source(spec: &str) -> Result<Source, String> {
    let source = Source::parse(spec)?;
    if let Source::Path(dir) = &source {
        for package in ENGINE_CRATES {
            let manifest = dir.join(package).join("Cargo.toml");
            let named = std::fs::read_to_string(&manifest)
                .ok()
                .and_then(|text| text.parse::<toml::Table>().ok())
                .and_then(|table| Some(table.get("package")?.get("name")?.as_str()? == package));
            if named != Some(true) {
                return Err(format!(
                    "`{spec}`: {} is not the `{package}` package: give the directory of the engine's workspace, which holds `engine/` and `engine-cli/`",
                    dir.join(package).display()
                ));
            }
        }
    }
    Ok(source)
}

/// The crate at `dir` is the one `name` says: a package of that name, as Cargo matches a
/// dependency's name to its package (`-` and `_` are not alike there). Whether it defines
/// a plugin is left to the image's `check` (a crate may reach plugin-sdk through a crate
/// of its own, `crate = ...`); a registry or Git plugin is checked by Cargo when the
/// image builds.
fn check_plugin_crate(name: &str, dir: &Path) -> Result<(), String> {
    let manifest_path = dir.join("Cargo.toml");
    let shown = dir.display();
    let text = std::fs::read_to_string(&manifest_path).map_err(|error| {
        format!("`{name}=path:{shown}`: {shown} holds no readable Cargo.toml ({error}): give the directory of the plugin crate")
    })?;
    let manifest: toml::Table = text.parse().map_err(|error| {
        format!(
            "`{name}=path:{shown}`: {} is not valid TOML: {error}",
            manifest_path.display()
        )
    })?;
    let Some(package) = manifest.get("package") else {
        return Err(format!("`{name}=path:{shown}`: {shown} is a workspace, not a package: give the directory of the plugin crate itself"));
    };
    let Some(package) = package.get("name").and_then(toml::Value::as_str) else {
        return Err(format!(
            "`{name}=path:{shown}`: {} names no package (`[package] name`)",
            manifest_path.display()
        ));
    };
    if package != name {
        return Err(format!(
            "`{name}=path:{shown}`: the crate there is `{package}`: write `--plugin {package}=path:{shown}`"
        ));
    }
    Ok(())
}

impl Source {
    fn parse(source: &str) -> Result<Self, String> {
        if let Some(dir) = source.strip_prefix("path:") {
            let dir = std::path::absolute(dir).map_err(|error| format!("`{dir}`: {error}"))?;
            return Ok(Self::Path(dir));
        }
        if let Some(url) = source.strip_prefix("git:") {
            let (url, rev) = match url.split_once('#') {
                Some((url, rev)) => (url, Some(rev.to_owned())),
                None => (url, None),
            };
            return Ok(Self::Git {
                url: url.to_owned(),
                rev,
            });
        }
        Err(format!(
            "`{source}` is not a source: write path:DIR or git:URL[#REV]"
        ))
    }

    /// The dependency's value in Cargo.toml.
    fn toml(&self) -> String {
        format!("{{ {} }}", self.keys())
    }

    /// The keys that say where a dependency comes from (`path = ..`, `git = ..`).
    fn keys(&self) -> String {
        match self {
            Self::Registry(version) => format!("version = {}", toml_string(version)),
            Self::Path(dir) => format!("path = {}", toml_string(&dir.to_string_lossy())),
            Self::Git { url, rev: None } => format!("git = {}", toml_string(url)),
            Self::Git {
                url,
                rev: Some(rev),
            } => format!("git = {}, rev = {}", toml_string(url), toml_string(rev)),
        }
    }

    /// The package `name` of the engine's workspace at this source: a path's is the
    /// directory of that name in it; a Git repository's, found by name.
    fn package(&self, name: &str) -> Self {
        match self {
            Self::Path(dir) => Self::Path(dir.join(name)),
            other => other.clone(),
        }
    }
}

/// `text` as a TOML basic string.
fn toml_string(text: &str) -> String {
    let mut quoted = String::from('"');
    for c in text.chars() {
        match c {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            c if c.is_control() => quoted.push_str(&format!("\\u{:04X}", c as u32)),
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    quoted
}

/// A package name Cargo takes, which is also a crate name once `-` is `_`.
fn crate_name(name: &str) -> Result<(), String> {
    let valid = name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if valid && !ENGINE_CRATES.contains(&name.replace('_', "-").as_str()) {
        Ok(())
    } else {
        Err(format!(
            "`{name}` is not a plugin crate's name: letters, digits, `-` and `_`, starting with a letter (and not `engine` or `engine-cli`, the image's own dependencies)"
        ))
    }
}

fn image_name(name: &str) -> Result<String, String> {
    let valid = name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if valid && !ENGINE_CRATES.contains(&name) {
        Ok(name.to_owned())
    } else {
        Err(format!(
            "`{name}` is not an image name: lowercase letters, digits and `-`, starting with a letter"
        ))
    }
}

/// The crates every image depends on besides its plugins: the engine with its backends,
/// and its command line. The template's build.rs links every other dependency.
const ENGINE_CRATES: [&str; 2] = ["engine", "engine-cli"];

/// This workspace, where the engine comes from by default. Its path without `..`: Cargo
/// tells packages apart by the path written, so the image's build shares this
/// workspace's only when the two spell it alike.
fn default_engine() -> Source {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    Source::Path(workspace.canonicalize().unwrap_or(workspace))
}

/// The `engine` dependency: the backends chosen, as its features, and no others.
fn engine_dependency(engine: &Source, backends: &[Backend]) -> String {
    let mut backends = if backends.is_empty() {
        vec![Backend::Sqlite, Backend::Http]
    } else {
        backends.to_vec()
    };
    backends.sort();
    backends.dedup();
    let features: Vec<String> = backends
        .iter()
        .map(|backend| toml_string(backend.feature()))
        .collect();
    format!(
        "{{ {}, default-features = false, features = [{}] }}",
        engine.package("engine").keys(),
        features.join(", ")
    )
}

/// The image's profiles, this workspace's own: an image ships with LTO, and its debug
/// builds keep line tables of its own code only. With the same profiles (and lock file),
/// an image built into this workspace's target directory finds its dependencies built
/// (scaffold/tests/new_image.rs).
const PROFILES: &str = "\n[profile.dev]\ndebug = \"line-tables-only\"\n\n\
     [profile.dev.package.\"*\"]\ndebug = false\n\n\
     [profile.release]\nlto = true\n";

/// The image crate's files, by path below its directory.
fn files(args: &Args) -> Vec<(&'static str, String)> {
    let fill = |template: &str| {
        template
            .replace("{{name}}", &args.name)
            // A Rust string literal: Debug escapes quotes, backslashes and controls.
            .replace("{{about}}", &format!("{:?}", args.about))
    };
    let engine = args.engine.clone().unwrap_or_else(default_engine);
    let mut manifest = format!(
        "[package]\nname = {}\nversion = \"0.1.0\"\nedition = \"2021\"\npublish = false\n\n\
         # An image is its own workspace.\n[workspace]\n\n\
         [dependencies]\n# The engine and the backends it opens its configured parts with.\n\
         engine = {}\n# The engine's command line.\nengine-cli = {}\n\
         # The plugins: every other dependency is linked into the image (build.rs).\n",
        toml_string(&args.name),
        engine_dependency(&engine, &args.backends),
        engine.package("engine-cli").toml()
    );
    for plugin in &args.plugins {
        manifest += &format!("{} = {}\n", plugin.name, plugin.source.toml());
    }
    manifest += "\n[build-dependencies]\ntoml = \"0.9\"\n";
    manifest += PROFILES;
    let mut files = vec![
        ("Cargo.toml", manifest),
        ("build.rs", include_str!("../template/build.rs").to_owned()),
        ("src/main.rs", fill(include_str!("../template/main.rs"))),
        ("engine.toml", fill(include_str!("../template/engine.toml"))),
        ("Dockerfile", fill(include_str!("../template/Dockerfile"))),
        (
            ".dockerignore",
            include_str!("../template/dockerignore").to_owned(),
        ),
    ];
    // With this workspace's engine, its lock file: the versions its tests ran with.
    if args.engine.is_none() {
        let lock = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.lock");
        if let Ok(lock) = std::fs::read_to_string(lock) {
            files.push(("Cargo.lock", lock));
        }
    }
    files
}

/// Refuses two plugins of one crate name (`-` and `_` are one): Cargo.toml would hold the
/// key twice, or `main.rs` one `use` twice.
fn distinct(plugins: &[Plugin]) -> Result<(), String> {
    let mut seen = Vec::new();
    for plugin in plugins {
        let name = plugin.name.replace('-', "_");
        if seen.contains(&name) {
            return Err(format!("the plugin `{}` is given twice", plugin.name));
        }
        seen.push(name);
    }
    Ok(())
}

fn write(args: &Args) -> Result<(), String> {
    distinct(&args.plugins)?;
    let failed = |path: &Path, error: std::io::Error| format!("{}: {error}", path.display());
    if let Ok(mut entries) = std::fs::read_dir(&args.out) {
        if entries.next().is_some() {
            return Err(format!(
                "{} is not empty: give a new directory",
                args.out.display()
            ));
        }
    }
    for (name, text) in files(args) {
        let path = args.out.join(name);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|error| failed(dir, error))?;
        }
        std::fs::write(&path, text).map_err(|error| failed(&path, error))?;
    }
    Ok(())
}

fn main() -> ExitCode {
    let args = Args::parse();
    match write(&args) {
        Ok(()) => {
            println!(
                "wrote {} in {}: `cargo run -- config check engine.toml` there, then `cargo run -- tools`",
                args.name,
                args.out.display()
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("new-image: {error}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests;
