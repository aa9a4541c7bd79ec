//! What `move_path` and `delete_path` do in their project: one step each, never a half-
//! moved or half-deleted tree, nothing replaced or deleted unless asked, and the cap,
//! the depth and the quota kept.

use std::fs;

use crate::common::{limits, Scratch};
use plugin_sdk::project::{Project, ProjectLimits};
use serde_json::json;

fn moving(from: &str, to: &str, overwrite: bool) -> String {
    json!({"from": from, "to": to, "overwrite": overwrite}).to_string()
}

fn deleting(path: &str, recursive: bool) -> String {
    json!({"path": path, "recursive": recursive}).to_string()
}

/// The names in the root that a change left behind: hidden temporary names.
fn leftovers(scratch: &Scratch) -> Vec<String> {
    fs::read_dir(scratch.root())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".tmp"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_renames_a_file_or_a_directory_with_what_it_holds() {
    let scratch = Scratch::new("move");
    let root = scratch.root();
    fs::write(root.join("draft.md"), "draft\n").unwrap();
    assert_eq!(
        scratch
            .call("move_path", &moving("draft.md", "docs/final.md", false))
            .await,
        Ok(json!({"ok": true, "replaced": false}))
    );
    assert!(!root.join("draft.md").exists());
    assert_eq!(
        fs::read_to_string(root.join("docs/final.md")).unwrap(),
        "draft\n"
    );
    fs::create_dir(root.join("archive")).unwrap();
    assert_eq!(
        scratch
            .call("move_path", &moving("docs", "archive/2026", false))
            .await,
        Ok(json!({"ok": true, "replaced": false}))
    );
    assert!(!root.join("docs").exists());
    assert_eq!(
        fs::read_to_string(root.join("archive/2026/readme.md")).unwrap(),
        "# Readme\n"
    );
    assert_eq!(
        fs::read_to_string(root.join("archive/2026/final.md")).unwrap(),
        "draft\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_replaces_only_a_file_and_only_when_asked() {
    let scratch = Scratch::new("move-replace");
    let root = scratch.root();
    fs::write(root.join("new.md"), "new\n").unwrap();
    fs::write(root.join("old.md"), "old\n").unwrap();
    let refused = scratch
        .call("move_path", &moving("new.md", "old.md", false))
        .await
        .unwrap_err();
    assert_eq!(
        refused,
        "`old.md` already exists: pass `overwrite: true` to replace it"
    );
    assert_eq!(fs::read_to_string(root.join("old.md")).unwrap(), "old\n");
    assert_eq!(
        scratch
            .call("move_path", &moving("new.md", "old.md", true))
            .await,
        Ok(json!({"ok": true, "replaced": true}))
    );
    assert_eq!(fs::read_to_string(root.join("old.md")).unwrap(), "new\n");
    assert!(!root.join("new.md").exists());
    // A directory is never replaced, not even an empty one, nor does one replace a file.
    fs::create_dir(root.join("empty")).unwrap();
    let refused = scratch
        .call("move_path", &moving("old.md", "empty", true))
        .await
        .unwrap_err();
    assert!(
        refused.contains("`empty` is a directory, which a move never replaces"),
        "{refused}"
    );
    let refused = scratch
        .call("move_path", &moving("empty", "old.md", true))
        .await
        .unwrap_err();
    assert_eq!(
        refused,
        "`old.md` is a file, which a directory cannot replace"
    );
    assert!(root.join("empty").is_dir());
    assert_eq!(fs::read_to_string(root.join("old.md")).unwrap(), "new\n");
    assert_eq!(leftovers(&scratch), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_that_would_tangle_or_lose_the_tree_is_refused_and_changes_nothing() {
    let scratch = Scratch::new("move-refused");
    let root = scratch.root();
    // 30 names deep: `deep/d1/.../d29`.
    let mut deep = root.join("deep");
    for level in 1..30 {
        deep = deep.join(format!("d{level}"));
    }
    fs::create_dir_all(&deep).unwrap();
    fs::create_dir_all(root.join("a/b/c")).unwrap();
    let inside = scratch.inside();
    let refusals = [
        (
            moving("docs", "docs", false),
            "`docs` is both `from` and `to`: nothing to move",
        ),
        (
            moving("docs", "docs/sub", false),
            "`docs/sub` is inside `docs`: a directory cannot be moved into itself",
        ),
        (
            moving("missing.md", "docs/x.md", false),
            "`missing.md` does not exist",
        ),
        (
            moving("docs/readme.md", "nowhere/readme.md", false),
            "the directory of `nowhere/readme.md` does not exist: create it with `create_directory` first",
        ),
        // 3 names down plus 30 beneath `deep` is 33: deeper than any path may go.
        (
            moving("deep", "a/b/c/deep", false),
            "moving `deep` there would put its contents 33 names deep; a path may go at most 32 deep",
        ),
        (moving(".", "docs/root", false), "the project root itself"),
    ];
    for (arguments, expected) in refusals {
        let said = scratch.call("move_path", &arguments).await.unwrap_err();
        assert!(said.contains(expected), "{arguments}: {said}");
    }
    assert_eq!(scratch.inside(), inside, "a refused move changed the tree");
    // One level less fits.
    assert!(scratch
        .call("move_path", &moving("deep", "a/b/deep", false))
        .await
        .is_ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deletion_takes_a_file_or_an_empty_directory_and_a_full_one_only_when_asked() {
    let scratch = Scratch::new("delete");
    let root = scratch.root();
    assert_eq!(
        scratch
            .call("delete_path", &deleting("docs/readme.md", false))
            .await,
        Ok(json!({"ok": true, "type": "file", "removed": 1}))
    );
    assert!(!root.join("docs/readme.md").exists());
    assert_eq!(
        scratch.call("delete_path", &deleting("docs", false)).await,
        Ok(json!({"ok": true, "type": "directory", "removed": 1}))
    );
    fs::create_dir_all(root.join("tree/sub")).unwrap();
    fs::write(root.join("tree/a.md"), "a").unwrap();
    fs::write(root.join("tree/sub/b.md"), "b").unwrap();
    let refused = scratch
        .call("delete_path", &deleting("tree", false))
        .await
        .unwrap_err();
    assert_eq!(
        refused,
        "`tree` is a directory that is not empty: pass `recursive: true` to delete it with everything in it"
    );
    assert!(root.join("tree/sub/b.md").exists());
    // The directory, `a.md`, `sub` and `sub/b.md`.
    assert_eq!(
        scratch.call("delete_path", &deleting("tree", true)).await,
        Ok(json!({"ok": true, "type": "directory", "removed": 4}))
    );
    assert!(!root.join("tree").exists());
    let refused = scratch
        .call("delete_path", &deleting("tree", true))
        .await
        .unwrap_err();
    assert_eq!(
        refused,
        "`tree` does not exist (or a directory on its way does not)"
    );
    // A symlink inside the tree is deleted as a name, never followed.
    fs::create_dir(root.join("linked")).unwrap();
    std::os::unix::fs::symlink("../../outside", root.join("linked/out")).unwrap();
    let outside = scratch.outside();
    assert_eq!(
        scratch.call("delete_path", &deleting("linked", true)).await,
        Ok(json!({"ok": true, "type": "directory", "removed": 2}))
    );
    assert_eq!(scratch.outside(), outside, "a deletion went outside");
    assert_eq!(leftovers(&scratch), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recursive_deletion_past_the_cap_deletes_nothing() {
    // The cap is the project's listing cap: 100 entries here.
    let scratch = Scratch::new("delete-cap");
    let root = scratch.root();
    fs::create_dir_all(root.join("big/sub")).unwrap();
    for index in 0..60 {
        fs::write(root.join(format!("big/{index}")), "x").unwrap();
        fs::write(root.join(format!("big/sub/{index}")), "x").unwrap();
    }
    let inside = scratch.inside();
    let refused = scratch
        .call("delete_path", &deleting("big", true))
        .await
        .unwrap_err();
    assert_eq!(
        refused,
        "`big` holds more than 100 entries beneath it, the most one call deletes: delete its subdirectories one by one"
    );
    assert_eq!(scratch.inside(), inside);
    // Its subdirectory, with 60 entries, is within the cap; then the rest is too.
    assert_eq!(
        scratch
            .call("delete_path", &deleting("big/sub", true))
            .await,
        Ok(json!({"ok": true, "type": "directory", "removed": 61}))
    );
    // One past the cap is refused; at the cap is within it.
    for index in 0..41 {
        fs::write(root.join(format!("big/more{index}")), "x").unwrap();
    }
    assert!(scratch
        .call("delete_path", &deleting("big", true))
        .await
        .unwrap_err()
        .contains("holds more than 100 entries"));
    fs::remove_file(root.join("big/more0")).unwrap();
    assert_eq!(
        scratch.call("delete_path", &deleting("big", true)).await,
        Ok(json!({"ok": true, "type": "directory", "removed": 101}))
    );
    assert!(!root.join("big").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deletion_frees_the_quota_and_a_move_takes_none_of_it() {
    let limits = ProjectLimits {
        quota_bytes: Some(150_000),
        max_file_bytes: 1 << 20,
        ..limits()
    };
    let scratch = Scratch::with_limits("delete-quota", limits);
    let write = |path: &str| json!({"path": path, "text": "q".repeat(100_000)}).to_string();
    assert!(scratch
        .call("write_text_content", &write("one"))
        .await
        .is_ok());
    assert!(scratch
        .call("write_text_content", &write("two"))
        .await
        .is_err());
    // A full project still moves what it holds.
    assert!(scratch
        .call("move_path", &moving("one", "docs/one", false))
        .await
        .is_ok());
    assert!(scratch
        .call("delete_path", &deleting("docs/one", false))
        .await
        .is_ok());
    assert!(scratch
        .call("write_text_content", &write("two"))
        .await
        .is_ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_moves_of_one_file_through_two_agents_leave_it_whole_in_one_place() {
    let scratch = Scratch::new("move-race");
    let root = scratch.root();
    let content = "moved once\n".repeat(1000);
    fs::write(root.join("page.md"), &content).unwrap();
    let moved = crate::common::calls_through_two_agents(&scratch, 8, "move_path", |index| {
        moving("page.md", &format!("docs/page{index}.md"), false)
    })
    .await;
    assert_eq!(moved, 1, "one move took the file; the others found it gone");
    let places: Vec<String> = (0..8)
        .map(|index| format!("docs/page{index}.md"))
        .chain(["page.md".to_owned()])
        .filter(|path| root.join(path).exists())
        .collect();
    assert_eq!(places.len(), 1, "{places:?}");
    assert_eq!(fs::read_to_string(root.join(&places[0])).unwrap(), content);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_racing_a_recursive_deletion_land_before_it_and_go_with_it_or_are_refused() {
    let scratch = Scratch::new("delete-race");
    let root = scratch.root();
    // A second agent on the same root: its own `Project`, one lock between them.
    let other = Project::new(fs::File::open(&root).unwrap(), limits());
    for _ in 0..10 {
        fs::create_dir_all(root.join("tree/sub")).unwrap();
        for index in 0..40 {
            fs::write(root.join(format!("tree/sub/{index}")), "x").unwrap();
        }
        let writes: Vec<_> = (0..6)
            .map(|index| {
                let project = other.clone();
                tokio::spawn(async move {
                    let arguments =
                        json!({"path": format!("tree/sub/new{index}"), "text": "late"}).to_string();
                    crate::common::call(&project, "write_text_content", &arguments).await
                })
            })
            .collect();
        let deleted = scratch
            .call("delete_path", &deleting("tree", true))
            .await
            .unwrap();
        let mut landed = 0;
        for write in writes {
            match write.await.unwrap() {
                Ok(_) => landed += 1,
                // After it: the directory is gone.
                Err(refused) => assert!(
                    refused.contains("does not exist: create it with `create_directory` first"),
                    "{refused}"
                ),
            }
        }
        // The tree, `sub`, its 40 files and every write that landed before the deletion.
        assert_eq!(deleted["removed"], json!(42 + landed), "{deleted}");
        assert!(!root.join("tree").exists(), "a write recreated the tree");
        assert_eq!(leftovers(&scratch), Vec::<String>::new());
    }
}
