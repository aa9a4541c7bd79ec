//! Links every plugin this image depends on: each dependency in Cargo.toml's
//! `[dependencies]` except `engine` and `engine-cli` is named once (`use <crate> as _;`), so that adding
//! or removing a plugin is one edit, there. (Not `[target.*.dependencies]`, nor
//! optional ones.)

use std::fmt::Write as _;

fn main() {
    println!("cargo::rerun-if-changed=Cargo.toml");
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let manifest =
        std::fs::read_to_string(format!("{dir}/Cargo.toml")).expect("Cargo.toml is readable");
    let manifest: toml::Table = manifest.parse().expect("Cargo.toml parses");
    let dependencies = manifest
        .get("dependencies")
        .and_then(toml::Value::as_table)
        .cloned()
        .unwrap_or_default();
    let mut uses = String::new();
    let engine = ["engine", "engine-cli"];
    for name in dependencies.keys().filter(|name| !engine.contains(&name.as_str())) {
        writeln!(uses, "use {} as _;", name.replace('-', "_")).unwrap();
    }
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    std::fs::write(format!("{out}/plugins.rs"), uses).expect("OUT_DIR is writable");
}
