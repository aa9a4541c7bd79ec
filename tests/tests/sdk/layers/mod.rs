//! The crates' modules in layers: no import circle among the modules of one parent, in
//! any crate of the workspace, and in the two crates with a table of layers here (the
//! kernel and the authors' SDK) no import of a module from a layer below it in the list.
//! A failure names each edge and the file it is written in.

mod modules;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use modules::{Crate, Import, ModPath};

/// engine-core's top-level modules, in layers: a module imports only from the layers
/// above its own. Modules of one layer do not import each other.
const ENGINE_CORE: &[&[&str]] = &[
    &[
        "backend_error",
        "builtins",
        "gemini",
        "guide",
        "limits",
        "parallel",
        "system",
    ],
    &["format", "wire"],
    &["conversation"],
    &["config"],
    &["provider"],
    &["model"],
    &["outcome"],
    &["stores"],
    &["tool"],
    &["catalog"],
    &["dispatch"],
    &["equip"],
    &["hooks"],
    &["validate"],
    &["registry"],
    &["redact"],
    &["external"],
    &["dev"],
    &["agent"],
    &["oauth"],
    &["turn"],
    &["engine"],
];

/// plugin-sdk's top-level modules, in layers. The public paths (`prelude`, `abort`,
/// `knowledge`, ...) re-export what the layers below define, and `__private` is what the
/// macros' expansions reach.
const PLUGIN_SDK: &[&[&str]] = &[
    &["error", "future", "guide", "json_path", "localized"],
    &["schema"],
    &["strict_read", "strict_check"],
    &["context"],
    &["param"],
    &["strict", "output"],
    &["plugin"],
    &["tool", "action"],
    &["channel", "hook"],
    &[
        "abort",
        "artifacts",
        "audit",
        "engine",
        "history",
        "knowledge",
        "model",
        "oauth",
        "project",
        "secrets",
        "shared",
        "state",
        "turn",
    ],
    &["prelude"],
    &["__private"],
];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Every crate of the workspace with its own source: a `Cargo.toml` beside `src/lib.rs`
/// or `src/main.rs`, outside build output and the compile-fail cases.
fn crates() -> Vec<(PathBuf, PathBuf)> {
    fn walk(dir: &Path, found: &mut Vec<(PathBuf, PathBuf)>) {
        let skip = ["target", ".git", ".venv", "ui", "ui-pass", "node_modules"];
        if dir.join("Cargo.toml").exists() {
            for root in ["src/lib.rs", "src/main.rs"] {
                if dir.join(root).exists() {
                    found.push((dir.to_path_buf(), dir.join(root)));
                }
            }
        }
        let mut entries: Vec<_> = fs::read_dir(dir).unwrap().flatten().collect();
        entries.sort_by_key(|e| e.path());
        for entry in entries {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if entry.file_type().unwrap().is_dir() && !skip.contains(&name.as_ref()) {
                walk(&entry.path(), found);
            }
        }
    }
    let mut found = Vec::new();
    walk(&workspace(), &mut found);
    found
}

/// Imports between sibling modules, by parent: `parent → (a, b) → files`.
type Edges = BTreeMap<ModPath, BTreeMap<(String, String), BTreeSet<String>>>;

fn sibling_edges(imports: &[Import]) -> Edges {
    let mut edges = Edges::new();
    for import in imports {
        let shared = import
            .from
            .iter()
            .zip(&import.to)
            .take_while(|(a, b)| a == b)
            .count();
        // An import of an ancestor's item or of a descendant's is no edge between siblings.
        if shared == import.from.len() || shared == import.to.len() {
            continue;
        }
        edges
            .entry(import.from[..shared].to_vec())
            .or_default()
            .entry((import.from[shared].clone(), import.to[shared].clone()))
            .or_default()
            .insert(import.file.clone());
    }
    edges
}

fn name(parent: &ModPath) -> String {
    if parent.is_empty() {
        "the crate root".to_owned()
    } else {
        parent.join("::")
    }
}

/// Each circle among one parent's children, as the edges that close it.
fn circles(edges: &BTreeMap<(String, String), BTreeSet<String>>) -> Vec<Vec<(String, String)>> {
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in edges.keys() {
        next.entry(a).or_default().push(b);
    }
    // A module is in a circle when it reaches itself; one circle per set of modules.
    let reach = |from: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_owned()];
        while let Some(m) = todo.pop() {
            for n in next.get(m.as_str()).into_iter().flatten() {
                if seen.insert(n.to_string()) {
                    todo.push(n.to_string());
                }
            }
        }
        seen
    };
    let mut found: Vec<Vec<(String, String)>> = Vec::new();
    let mut covered = BTreeSet::new();
    for &start in next.keys() {
        if covered.contains(start) || !reach(start).contains(start) {
            continue;
        }
        let members: BTreeSet<String> = reach(start)
            .into_iter()
            .filter(|m| reach(m).contains(start))
            .collect();
        covered.extend(members.iter().cloned());
        found.push(
            edges
                .keys()
                .filter(|(a, b)| members.contains(a) && members.contains(b))
                .cloned()
                .collect(),
        );
    }
    found
}

#[test]
fn no_crate_has_an_import_circle_among_the_modules_of_one_parent() {
    let mut problems = Vec::new();
    let all = crates();
    assert!(all.len() >= 8, "found too few crates: {all:?}");
    for (dir, root) in all {
        let krate = Crate::read(&dir, &root);
        let label = dir.strip_prefix(workspace()).unwrap().display().to_string();
        for (parent, edges) in sibling_edges(&krate.imports()) {
            for circle in circles(&edges) {
                let lines: Vec<String> = circle
                    .iter()
                    .map(|edge| {
                        let files: Vec<_> = edges[edge].iter().cloned().collect();
                        format!("    {} -> {}  ({})", edge.0, edge.1, files.join(", "))
                    })
                    .collect();
                problems.push(format!(
                    "{label}: a circle among the modules of {}:\n{}",
                    name(&parent),
                    lines.join("\n")
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

fn check_layers(dir: &str, root: &str, layers: &[&[&str]]) {
    let dir = workspace().join(dir);
    let krate = Crate::read(&dir, &dir.join(root));
    let layer: BTreeMap<&str, usize> = layers
        .iter()
        .enumerate()
        .flat_map(|(i, names)| names.iter().map(move |name| (*name, i)))
        .collect();
    let edges = sibling_edges(&krate.imports());
    let mut problems = Vec::new();
    for module in krate.top_level() {
        if !layer.contains_key(module.as_str()) {
            problems.push(format!(
                "the module `{module}` is in no layer: add it to the table in {}",
                file!()
            ));
        }
    }
    let declared: Vec<&String> = krate.top_level().collect();
    for name in layer.keys() {
        if !declared.iter().any(|module| module.as_str() == *name) {
            problems.push(format!(
                "the table names `{name}`, which is no module of the crate"
            ));
        }
    }
    for ((a, b), files) in edges.get(&Vec::new()).into_iter().flatten() {
        let (Some(&from), Some(&to)) = (layer.get(a.as_str()), layer.get(b.as_str())) else {
            continue;
        };
        if to >= from {
            let files: Vec<_> = files.iter().cloned().collect();
            problems.push(format!(
                "`{a}` (layer {from}) imports `{b}` (layer {to}), which is not above it: {}",
                files.join(", ")
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "{}:\n{}",
        dir.display(),
        problems.join("\n")
    );
}

#[test]
fn engine_core_imports_only_from_the_layers_above_each_module() {
    check_layers("engine-core", "src/lib.rs", ENGINE_CORE);
}

#[test]
fn plugin_sdk_imports_only_from_the_layers_above_each_module() {
    check_layers("plugin-sdk", "src/lib.rs", PLUGIN_SDK);
}
