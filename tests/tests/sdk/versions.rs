//! Two semver-incompatible `plugin-sdk`s in one image: each would have its own registry,
//! and the engine reads only one. Cargo refuses the graph, naming both, because every
//! plugin-sdk carries the same `links` key.

use std::path::Path;
use std::process::Command;

/// The `links` value of the workspace's plugin-sdk.
fn links() -> String {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../plugin-sdk/Cargo.toml");
    std::fs::read_to_string(manifest)
        .unwrap()
        .lines()
        .find_map(|line| line.strip_prefix("links = "))
        .expect("plugin-sdk's manifest has a `links` key")
        .trim_matches('"')
        .to_owned()
}

#[test]
fn an_image_with_two_semver_incompatible_plugin_sdks_is_refused_naming_both() {
    let dir = std::env::temp_dir().join(format!("sdk-two-versions-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // The next, incompatible plugin-sdk, as a plugin built against it would bring it:
    // its own version, the same key.
    let next = dir.join("plugin-sdk-next");
    std::fs::create_dir_all(next.join("src")).unwrap();
    std::fs::write(
        next.join("Cargo.toml"),
        format!(
            "[package]\nname = \"plugin-sdk\"\nversion = \"99.0.0\"\nedition = \"2021\"\n\
             links = {:?}\nbuild = \"build.rs\"\n[workspace]\n",
            links()
        ),
    )
    .unwrap();
    std::fs::write(next.join("build.rs"), "fn main() {}\n").unwrap();
    std::fs::write(next.join("src/lib.rs"), "").unwrap();
    // An image that links this workspace's plugin-sdk and, through a plugin, the next.
    let image = dir.join("image");
    std::fs::create_dir_all(image.join("src")).unwrap();
    let ours = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../plugin-sdk")
        .canonicalize()
        .unwrap();
    std::fs::write(
        image.join("Cargo.toml"),
        format!(
            "[package]\nname = \"image\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[workspace]\n\
             [dependencies]\nplugin-sdk = {{ path = {ours:?} }}\n\
             plugin-sdk-next = {{ package = \"plugin-sdk\", path = {next:?} }}\n",
        ),
    )
    .unwrap();
    std::fs::write(image.join("src/main.rs"), "fn main() {}\n").unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let resolved = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--offline"])
        .current_dir(&image)
        .output()
        .unwrap();
    let error = String::from_utf8_lossy(&resolved.stderr);
    assert!(!resolved.status.success(), "the graph resolved: {error}");
    assert!(
        error.contains(&format!("links to the native library `{}`", links())),
        "{error}"
    );
    let ours_version = env!("CARGO_PKG_VERSION");
    assert!(
        error.contains("99.0.0") && error.contains(&format!("plugin-sdk v{ours_version}")),
        "the error names both versions: {error}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
