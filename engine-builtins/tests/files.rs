//! What each tool does in its project: the seed's results, the limits that keep a call
//! from blocking or exploding, and writes that are never torn.

mod common;

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::UnixListener;
use std::time::Duration;

use common::{limits, Scratch};
use plugin_sdk::project::ProjectLimits;
use serde_json::json;

/// A call that must answer soon: a tool that blocked would hang the test instead.
async fn soon<T>(call: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(20), call)
        .await
        .expect("the call answered instead of blocking")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_seeds_example_creates_a_directory_and_writes_a_page_into_it() {
    let scratch = Scratch::new("seed");
    let created = scratch
        .call("create_directory", r#"{"path": "docs/intro"}"#)
        .await;
    assert_eq!(created, Ok(json!({"ok": true, "created": true})));
    let again = scratch
        .call("create_directory", r#"{"path": "docs/intro/"}"#)
        .await;
    assert_eq!(again, Ok(json!({"ok": true, "created": false})));

    let page = "# Intro\n\nA short intro paragraph.\n";
    let arguments = json!({"path": "docs/intro/index.page", "text": page}).to_string();
    let written = scratch.call("write_text_content", &arguments).await;
    assert_eq!(
        written,
        Ok(json!({"ok": true, "created": true, "size": page.len()}))
    );
    assert_eq!(
        std::fs::read_to_string(scratch.root().join("docs/intro/index.page")).unwrap(),
        page
    );
    let read = scratch
        .call("get_text_content", r#"{"path": "docs/intro/index.page"}"#)
        .await;
    assert_eq!(read, Ok(json!(page)));

    let overwritten = json!({"path": "docs/intro/index.page", "text": "# New\n"}).to_string();
    let written = scratch.call("write_text_content", &overwritten).await;
    assert_eq!(
        written,
        Ok(json!({"ok": true, "created": false, "size": 6}))
    );

    let meta = scratch
        .call("read_path_meta", r#"{"path": "docs/intro/index.page"}"#)
        .await
        .unwrap();
    assert_eq!(meta["type"], "file");
    assert_eq!(meta["size"], 6);
    let modified = meta["modifiedAt"].as_str().unwrap();
    let parsed = chrono::DateTime::parse_from_rfc3339(modified).expect("RFC 3339");
    let on_disk: chrono::DateTime<chrono::Utc> =
        std::fs::metadata(scratch.root().join("docs/intro/index.page"))
            .unwrap()
            .modified()
            .unwrap()
            .into();
    assert_eq!(parsed.timestamp(), on_disk.timestamp());
    assert!(modified.ends_with('Z'), "{modified}");
    let dir = scratch
        .call("read_path_meta", r#"{"path": "docs"}"#)
        .await
        .unwrap();
    assert_eq!(dir["type"], "directory");
    let root = scratch
        .call("read_path_meta", r#"{"path": "."}"#)
        .await
        .unwrap();
    assert_eq!(root["type"], "directory");

    let listing = scratch
        .call(
            "list_files",
            r#"{"path": "docs", "recursive": true, "max_depth": null, "max_entries": null}"#,
        )
        .await;
    assert_eq!(
        listing,
        Ok(json!({"entries": [
            {"name": "intro", "type": "directory"},
            {"name": "intro/index.page", "type": "file"},
            {"name": "readme.md", "type": "file"},
        ], "truncated": false, "skipped": 0}))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_into_a_missing_directory_says_to_create_it() {
    let scratch = Scratch::new("missing-dir");
    let refused = scratch
        .call(
            "write_text_content",
            r#"{"path": "nowhere/page.md", "text": "x"}"#,
        )
        .await
        .unwrap_err();
    assert!(
        refused.contains("create it with `create_directory`"),
        "{refused}"
    );
    assert!(!scratch.root().join("nowhere").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_root_a_directory_and_a_symlink_are_not_written_over() {
    let scratch = Scratch::new("not-files");
    std::os::unix::fs::symlink("docs/readme.md", scratch.root().join("inner_link")).unwrap();
    for (path, says) in [
        (".", "project root itself"),
        ("docs", "is a directory"),
        ("inner_link", "is a symbolic link"),
    ] {
        let arguments = json!({"path": path, "text": "x"}).to_string();
        let refused = scratch
            .call("write_text_content", &arguments)
            .await
            .unwrap_err();
        assert!(refused.contains(says), "{path}: {refused}");
    }
    assert_eq!(
        std::fs::read_to_string(scratch.root().join("docs/readme.md")).unwrap(),
        "# Readme\n"
    );
    // Reading through a symlink that stays inside is reading what it names.
    let read = scratch
        .call("get_text_content", r#"{"path": "inner_link"}"#)
        .await;
    assert_eq!(read, Ok(json!("# Readme\n")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_over_the_limit_are_refused_with_their_size() {
    let scratch = Scratch::new("size");
    let max = limits().max_file_bytes as usize;
    std::fs::write(scratch.root().join("big.txt"), "a".repeat(max + 1)).unwrap();
    let refused = scratch
        .call("get_text_content", r#"{"path": "big.txt"}"#)
        .await
        .unwrap_err();
    assert!(
        refused.contains(&format!(
            "is {} bytes, over the project's limit of {max} bytes",
            max + 1
        )),
        "{refused}"
    );
    let arguments = json!({"path": "big2.txt", "text": "a".repeat(max + 1)}).to_string();
    let refused = scratch
        .call("write_text_content", &arguments)
        .await
        .unwrap_err();
    assert!(
        refused.contains(&format!("the text is {} bytes", max + 1)),
        "{refused}"
    );
    assert!(!scratch.root().join("big2.txt").exists());
    // At the limit is fine.
    std::fs::write(scratch.root().join("big.txt"), "a".repeat(max)).unwrap();
    assert!(scratch
        .call("get_text_content", r#"{"path": "big.txt"}"#)
        .await
        .is_ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binary_content_is_refused_as_not_text() {
    let scratch = Scratch::new("binary");
    std::fs::write(scratch.root().join("nul.bin"), b"PK\x03\x04\x00\x00text").unwrap();
    std::fs::write(scratch.root().join("latin1.txt"), b"caf\xe9\n").unwrap();
    for path in ["nul.bin", "latin1.txt"] {
        let arguments = json!({"path": path}).to_string();
        let refused = scratch
            .call("get_text_content", &arguments)
            .await
            .unwrap_err();
        assert!(refused.contains("is not text"), "{path}: {refused}");
    }
    std::fs::write(scratch.root().join("utf8.txt"), "caffè\n").unwrap();
    let read = scratch
        .call("get_text_content", r#"{"path": "utf8.txt"}"#)
        .await;
    assert_eq!(read, Ok(json!("caffè\n")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_and_a_socket_are_refused_without_blocking() {
    let scratch = Scratch::new("special");
    let fifo = scratch.root().join("pipe");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    let _socket = UnixListener::bind(scratch.root().join("sock")).unwrap();
    for path in ["pipe", "sock"] {
        let arguments = json!({"path": path}).to_string();
        let refused = soon(scratch.call("get_text_content", &arguments))
            .await
            .unwrap_err();
        assert!(refused.contains("not a regular file"), "{path}: {refused}");
        let refused = soon(scratch.call("read_path_meta", &arguments))
            .await
            .unwrap_err();
        assert!(
            refused.contains("neither a file nor a directory"),
            "{path}: {refused}"
        );
        let write = json!({"path": path, "text": "x"}).to_string();
        let refused = soon(scratch.call("write_text_content", &write))
            .await
            .unwrap_err();
        assert!(refused.contains("not a regular file"), "{path}: {refused}");
    }
    let listing = soon(scratch.call(
        "list_files",
        r#"{"path": ".", "recursive": false, "max_depth": null, "max_entries": null}"#,
    ))
    .await
    .unwrap();
    let kinds: Vec<_> = listing["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|entry| entry["name"] == "pipe" || entry["name"] == "sock")
        .map(|entry| entry["type"].clone())
        .collect();
    assert_eq!(kinds, [json!("other"), json!("other")]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listings_are_capped_and_say_when_they_were_cut() {
    let scratch = Scratch::new("listing");
    let many = scratch.root().join("many");
    std::fs::create_dir(&many).unwrap();
    for index in 0..150 {
        std::fs::write(many.join(format!("f{index:03}")), "").unwrap();
    }
    let listed = |arguments: &'static str| scratch.call("list_files", arguments);
    let all =
        listed(r#"{"path": "many", "recursive": false, "max_depth": null, "max_entries": null}"#)
            .await
            .unwrap();
    assert_eq!(
        all["entries"].as_array().unwrap().len(),
        limits().max_list_entries
    );
    assert_eq!(all["truncated"], true);
    let ten =
        listed(r#"{"path": "many", "recursive": null, "max_depth": null, "max_entries": 10}"#)
            .await
            .unwrap();
    assert_eq!(ten["entries"].as_array().unwrap().len(), 10);
    assert_eq!(ten["truncated"], true);
    let more_than_allowed = listed(
        r#"{"path": "many", "recursive": null, "max_depth": null, "max_entries": 4000000000}"#,
    )
    .await
    .unwrap();
    assert_eq!(
        more_than_allowed["entries"].as_array().unwrap().len(),
        limits().max_list_entries
    );

    std::fs::create_dir_all(scratch.root().join("deep/a/b/c")).unwrap();
    let two = listed(r#"{"path": "deep", "recursive": true, "max_depth": 2, "max_entries": null}"#)
        .await
        .unwrap();
    assert_eq!(
        two,
        json!({"entries": [{"name": "a", "type": "directory"}, {"name": "a/b", "type": "directory"}],
               "truncated": false, "skipped": 0})
    );
    let flat =
        listed(r#"{"path": "deep", "recursive": false, "max_depth": 5, "max_entries": null}"#)
            .await
            .unwrap();
    assert_eq!(flat["entries"], json!([{"name": "a", "type": "directory"}]));
    let too_deep =
        listed(r#"{"path": "deep", "recursive": true, "max_depth": 33, "max_entries": null}"#)
            .await
            .unwrap_err();
    assert!(too_deep.contains("give 1 to 32"), "{too_deep}");
    let a_file = listed(
        r#"{"path": "docs/readme.md", "recursive": null, "max_depth": null, "max_entries": null}"#,
    )
    .await
    .unwrap_err();
    assert!(a_file.contains("is a file, not a directory"), "{a_file}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_that_are_not_utf8_are_skipped_and_counted() {
    let scratch = Scratch::new("non-utf8");
    let name = OsStr::from_bytes(b"bad\xff name");
    std::fs::write(scratch.root().join("docs").join(name), "x").unwrap();
    let listing = scratch
        .call(
            "list_files",
            r#"{"path": "docs", "recursive": null, "max_depth": null, "max_entries": null}"#,
        )
        .await
        .unwrap();
    assert_eq!(
        listing["entries"],
        json!([{"name": "readme.md", "type": "file"}])
    );
    assert_eq!(listing["skipped"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_quota_counts_every_file_and_an_overwrite_by_its_difference() {
    let scratch = Scratch::with_limits(
        "quota",
        ProjectLimits {
            quota_bytes: Some(100),
            ..limits()
        },
    );
    // docs/readme.md holds 9 bytes; files outside the root, reached by symlinks, count
    // for nothing.
    let write =
        |path: &str, size: usize| json!({"path": path, "text": "q".repeat(size)}).to_string();
    assert!(scratch
        .call("write_text_content", &write("one.txt", 60))
        .await
        .is_ok());
    let refused = scratch
        .call("write_text_content", &write("two.txt", 60))
        .await
        .unwrap_err();
    assert_eq!(
        refused,
        "writing `two.txt` would bring the project's files to 129 bytes, over its quota of 100 bytes"
    );
    assert!(!scratch.root().join("two.txt").exists());
    assert!(scratch
        .call("write_text_content", &write("one.txt", 91))
        .await
        .is_ok());
    assert!(scratch
        .call("write_text_content", &write("one.txt", 92))
        .await
        .is_err());
    assert_eq!(
        std::fs::read(scratch.root().join("one.txt")).unwrap().len(),
        91
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writes_to_one_path_leave_one_whole_version_and_readers_never_see_half() {
    let scratch = Scratch::new("concurrent");
    let size = 48 * 1024;
    let target = scratch.root().join("page.md");
    std::fs::write(&target, "0".repeat(size)).unwrap();
    let reading = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let reader = {
        let (target, reading) = (target.clone(), reading.clone());
        std::thread::spawn(move || {
            let mut reads = 0;
            while reading.load(std::sync::atomic::Ordering::Relaxed) {
                let bytes = std::fs::read(&target).unwrap();
                assert_eq!(bytes.len(), size, "a read saw a torn file");
                assert!(
                    bytes.iter().all(|&byte| byte == bytes[0]),
                    "a read saw two versions"
                );
                reads += 1;
            }
            reads
        })
    };
    let writes: Vec<_> = (0..16u8)
        .map(|writer| {
            let project = scratch.project.clone();
            let text = char::from(b'a' + writer).to_string().repeat(size);
            tokio::spawn(async move {
                let arguments = json!({"path": "page.md", "text": text}).to_string();
                for _ in 0..4 {
                    common::call(&project, "write_text_content", &arguments)
                        .await
                        .unwrap();
                }
            })
        })
        .collect();
    for write in writes {
        write.await.unwrap();
    }
    reading.store(false, std::sync::atomic::Ordering::Relaxed);
    let reads = reader.join().expect("every read saw one whole version");
    assert!(reads > 0);
    let last = std::fs::read(&target).unwrap();
    assert_eq!(last.len(), size);
    assert!((b'a'..b'a' + 16).contains(&last[0]) && last.iter().all(|&byte| byte == last[0]));
    let leftovers: Vec<_> = std::fs::read_dir(scratch.root())
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .filter(|name| name.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_symlink_swapped_in_while_calls_run_never_leads_them_outside() {
    let scratch = Scratch::new("swap");
    let root = scratch.root();
    std::fs::create_dir(root.join("real")).unwrap();
    std::fs::write(root.join("real/keep.txt"), "inside\n").unwrap();
    let outside = scratch.outside();
    // `swap` is, in turn, a directory inside and a symlink to `outside/`, each put in
    // place by an atomic rename.
    let swapping = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let swapper = {
        let (root, swapping) = (root.clone(), swapping.clone());
        std::thread::spawn(move || {
            std::os::unix::fs::symlink("../outside", root.join("swap_link")).unwrap();
            std::os::unix::fs::symlink("real", root.join("swap_inner")).unwrap();
            while swapping.load(std::sync::atomic::Ordering::Relaxed) {
                std::fs::hard_link(root.join("swap_link"), root.join("swap_next")).ok();
                let _ = std::fs::rename(root.join("swap_next"), root.join("swap"));
                std::fs::hard_link(root.join("swap_inner"), root.join("swap_next")).ok();
                let _ = std::fs::rename(root.join("swap_next"), root.join("swap"));
            }
        })
    };
    let (mut read_inside, mut refused_outside) = (0, 0);
    for round in 0..300 {
        let arguments =
            json!({"path": "swap/keep.txt", "text": format!("round {round}")}).to_string();
        let _ = scratch.call("write_text_content", &arguments).await;
        match scratch
            .call("get_text_content", r#"{"path": "swap/keep.txt"}"#)
            .await
        {
            Ok(text) => {
                assert_ne!(text, json!("keep me\n"), "a read went outside");
                read_inside += 1;
            }
            Err(refused) if refused.contains("outside the project root") => refused_outside += 1,
            Err(_) => {}
        }
        let _ = scratch
            .call("create_directory", r#"{"path": "swap/made"}"#)
            .await;
    }
    swapping.store(false, std::sync::atomic::Ordering::Relaxed);
    swapper.join().unwrap();
    assert_eq!(
        scratch.outside(),
        outside,
        "a call changed something outside the root"
    );
    // Calls met both: `swap` leading inside, and leading out.
    assert!(
        read_inside > 0 && refused_outside > 0,
        "{read_inside} {refused_outside}"
    );
}
