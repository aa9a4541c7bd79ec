//! Links every plugin this image depends on: each dependency in Cargo.toml except
//! `engine` is named once (`use <crate> as _;`), so that adding or removing a plugin is
//! one edit, there.

use std::fmt::Write as _;

fn main() {
    println!("cargo::rerun-if-changed=Cargo.toml");
    let manifest = std::fs::read_to_string("Cargo.toml").expect("Cargo.toml is readable");
    let manifest: toml::Table = manifest.parse().expect("Cargo.toml parses");
    let dependencies = manifest
        .get("dependencies")
        .and_then(toml::Value::as_table)
        .cloned()
        .unwrap_or_default();
    let mut uses = String::new();
    for name in dependencies.keys().filter(|name| *name != "engine") {
        writeln!(uses, "use {} as _;", name.replace('-', "_")).unwrap();
    }
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    std::fs::write(format!("{out}/plugins.rs"), uses).expect("OUT_DIR is writable");
}
