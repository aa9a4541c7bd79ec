//! Every tool against a corpus of paths that try to leave the project root: each call is
//! refused, its message names no host path, and nothing changes outside the root (or
//! inside it).

use crate::common::{Scratch, TOOLS};

/// Paths the model might send to reach outside the root, with what each tries.
fn corpus(scratch: &Scratch) -> Vec<(String, &'static str)> {
    let host_secret = scratch.dir.join("secret.txt").display().to_string();
    vec![
        ("../secret.txt".into(), "a parent"),
        ("docs/../../secret.txt".into(), "a parent after a name"),
        ("..".into(), "the parent itself"),
        ("./../outside/keep.txt".into(), "a parent after `.`"),
        ("/secret.txt".into(), "an absolute path"),
        (host_secret, "the absolute host path of a file outside"),
        ("//etc/passwd".into(), "a doubled leading slash"),
        ("link_out".into(), "a symlink to a directory outside"),
        (
            "link_out/keep.txt".into(),
            "a file through a symlink outside",
        ),
        (
            "link_out/new.txt".into(),
            "a new file through a symlink outside",
        ),
        (
            "link_out/new_dir/deeper".into(),
            "a new directory through a symlink outside",
        ),
        ("file_out".into(), "a symlink to a file outside"),
        ("abs_out/keep.txt".into(), "an absolute symlink"),
        (
            "abs_out/new.txt".into(),
            "a new file through an absolute symlink",
        ),
        ("abs_out".into(), "an absolute symlink itself"),
        ("docs/\0/x".into(), "a NUL byte"),
        ("secret.txt\0.md".into(), "a NUL byte before an extension"),
        ("a".repeat(256), "an over-long name"),
        (format!("docs/{}", "a/".repeat(600)), "an over-long path"),
        ("..\\secret.txt".into(), "a Windows parent"),
        ("docs\\..\\..\\secret.txt".into(), "Windows separators"),
        (
            "C:\\Windows\\win.ini".into(),
            "a drive letter and backslashes",
        ),
        ("C:/secret.txt".into(), "a drive letter"),
        ("c:secret.txt".into(), "a drive-relative path"),
        ("docs/readme.md\n../secret.txt".into(), "a line break"),
    ]
}

/// The arguments each tool gets for `path`: for `move_path`, once as what is moved (to a
/// free name inside) and once as where it goes (from a file inside, replacing).
fn arguments(tool: &str, path: &str) -> Vec<String> {
    let path = serde_json::to_string(path).unwrap();
    match tool {
        "write_text_content" => vec![format!(r#"{{"path": {path}, "text": "overwritten"}}"#)],
        "list_files" => vec![format!(
            r#"{{"path": {path}, "recursive": true, "max_depth": null, "max_entries": null}}"#
        )],
        "move_path" => vec![
            format!(r#"{{"from": {path}, "to": "docs/moved", "overwrite": true}}"#),
            format!(r#"{{"from": "docs/readme.md", "to": {path}, "overwrite": true}}"#),
        ],
        "delete_path" => vec![format!(r#"{{"path": {path}, "recursive": true}}"#)],
        _ => vec![format!(r#"{{"path": {path}}}"#)],
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_refuses_every_path_that_leads_outside_and_changes_nothing() {
    let scratch = Scratch::new("hostile");
    let outside = scratch.outside();
    let inside = scratch.inside();
    let host = scratch.dir.display().to_string();
    let mut cases = 0;
    for tool in TOOLS {
        for (path, tries) in corpus(&scratch) {
            for arguments in arguments(tool, &path) {
                let answer = scratch.call(tool, &arguments).await;
                let message = match answer {
                    Err(message) => message,
                    Ok(output) => panic!("`{tool}` answered {tries} ({arguments}): {output}"),
                };
                for leak in [
                    host.as_str(),
                    "/tmp",
                    "/etc",
                    "the host's secret",
                    "keep me",
                ] {
                    assert!(
                        !message.contains(leak),
                        "`{tool}` on {tries} says {leak:?}: {message}"
                    );
                }
                assert_eq!(
                    scratch.outside(),
                    outside,
                    "`{tool}` on {tries} changed outside"
                );
                assert_eq!(
                    scratch.inside(),
                    inside,
                    "`{tool}` on {tries} changed inside"
                );
                cases += 1;
            }
        }
    }
    assert_eq!(
        TOOLS,
        crate::common::linked_builtins().as_slice(),
        "the corpus runs against every built-in"
    );
    // `move_path` meets each path twice: as what it moves and as where.
    assert_eq!(cases, (TOOLS.len() + 1) * corpus(&scratch).len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reasons_name_what_was_wrong() {
    let scratch = Scratch::new("reasons");
    // Asserts that every way `tool` takes `path` is refused saying `expected`.
    let says = |tool: &'static str, path: &str, expected: &'static str| {
        let every = arguments(tool, path);
        let project = scratch.project.clone();
        async move {
            for arguments in every {
                let said = crate::common::call(&project, tool, &arguments)
                    .await
                    .unwrap_err();
                assert!(said.contains(expected), "`{tool}` with {arguments}: {said}");
            }
        }
    };
    for tool in TOOLS {
        says(tool, "../secret.txt", "`..` is not allowed").await;
        says(tool, "/etc/passwd", "absolute").await;
        says(tool, "C:/x", "drive letter").await;
        says(tool, "docs\\x", "`/`").await;
        says(tool, "a\0b", "NUL").await;
        says(tool, &"n".repeat(300), "300 bytes long").await;
        // What the file system layer refuses, it refuses in the same words for every tool.
        for path in [
            "link_out",
            "link_out/keep.txt",
            "link_out/new_dir/deeper",
            "abs_out/keep.txt",
        ] {
            // A write, a move or a deletion changes a name, and never a symlink, wherever
            // it leads.
            let changes_the_name =
                matches!(tool, "write_text_content" | "move_path" | "delete_path");
            let expected = if changes_the_name && path == "link_out" {
                "`link_out` is a symbolic link"
            } else {
                "outside the project root"
            };
            says(tool, path, expected).await;
        }
    }
    says(
        "get_text_content",
        "file_out",
        "`file_out` is outside the project root",
    )
    .await;
    // A write, a move or a deletion changes a name, and never through a symlink, whatever
    // it names.
    for tool in ["write_text_content", "move_path", "delete_path"] {
        says(tool, "file_out", "`file_out` is a symbolic link").await;
    }
}
