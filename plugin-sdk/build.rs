//! Nothing to build. The package's `links` key (Cargo.toml) is what this script is for:
//! Cargo takes the key only from a package with a build script.

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
}
