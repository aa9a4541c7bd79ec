//! What each tool does in its project: the seed's results, the limits that keep a call
//! from blocking or exploding, and writes that are never torn.

use std::ffi::OsStr;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::UnixListener;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::common::{limits, Scratch};
use plugin_sdk::project::{Project, ProjectLimits};
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

    // Symlinks are listed as such, and never followed.
    let top = scratch
        .call(
            "list_files",
            r#"{"path": ".", "recursive": true, "max_depth": 2, "max_entries": null}"#,
        )
        .await
        .unwrap();
    for link in ["abs_out", "file_out", "link_out"] {
        let entry = json!({"name": link, "type": "symlink"});
        assert!(top["entries"].as_array().unwrap().contains(&entry), "{top}");
    }
    assert!(!top.to_string().contains("keep.txt"), "{top}");

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
async fn an_overwrite_keeps_the_files_permissions_but_no_set_id_bit() {
    use std::os::unix::fs::PermissionsExt;
    let scratch = Scratch::new("permissions");
    for (before, after) in [(0o600, 0o600), (0o4755, 0o755), (0o2640, 0o640)] {
        let path = scratch.root().join("kept.sh");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(before)).unwrap();
        let written = scratch
            .call(
                "write_text_content",
                r#"{"path": "kept.sh", "text": "new"}"#,
            )
            .await;
        assert!(written.is_ok(), "{written:?}");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, after, "{before:o} became {mode:o}");
    }
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
    let first: Vec<&str> = ten["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["name"].as_str().unwrap())
        .collect();
    let names: Vec<String> = (0..10).map(|index| format!("f{index:03}")).collect();
    assert_eq!(first, names, "a cut listing holds the first names");
    assert_eq!(ten["truncated"], true);
    // Exactly the most entries is not cut; one more is.
    for index in 100..150 {
        std::fs::remove_file(many.join(format!("f{index:03}"))).unwrap();
    }
    let exact =
        listed(r#"{"path": "many", "recursive": null, "max_depth": null, "max_entries": null}"#)
            .await
            .unwrap();
    assert_eq!(exact["entries"].as_array().unwrap().len(), 100);
    assert_eq!(exact["truncated"], false);
    std::fs::write(many.join("f100"), "").unwrap();
    let one_more =
        listed(r#"{"path": "many", "recursive": null, "max_depth": null, "max_entries": null}"#)
            .await
            .unwrap();
    assert_eq!(one_more["truncated"], true);
    let recursive =
        listed(r#"{"path": ".", "recursive": true, "max_depth": null, "max_entries": 5}"#)
            .await
            .unwrap();
    assert_eq!(recursive["entries"].as_array().unwrap().len(), 5);
    assert_eq!(recursive["truncated"], true);
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
async fn devices_are_never_read() {
    // /dev as a project, touched only by the tools that read.
    let project = Project::new(std::fs::File::open("/dev").unwrap(), limits());
    for device in ["null", "zero", "urandom"] {
        let arguments = json!({ "path": device }).to_string();
        let refused = soon(crate::common::call(
            &project,
            "get_text_content",
            &arguments,
        ))
        .await
        .unwrap_err();
        assert!(
            refused.contains("not a regular file"),
            "{device}: {refused}"
        );
        let refused = soon(crate::common::call(&project, "read_path_meta", &arguments))
            .await
            .unwrap_err();
        assert!(
            refused.contains("neither a file nor a directory"),
            "{device}: {refused}"
        );
    }
    let listing = soon(crate::common::call(
        &project,
        "list_files",
        r#"{"path": ".", "recursive": false, "max_depth": null, "max_entries": null}"#,
    ))
    .await
    .unwrap();
    let null = json!({"name": "null", "type": "other"});
    assert!(listing["entries"].as_array().unwrap().contains(&null));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_that_are_not_valid_json_text_are_refused() {
    let scratch = Scratch::new("surrogate");
    for arguments in [
        r#"{"path": "\ud800"}"#,
        r#"{"path": "docs\ud800/x"}"#,
        r#"{"path": 7}"#,
        r#"{"path": "a", "extra": 1}"#,
    ] {
        let refused = scratch.call("read_path_meta", arguments).await.unwrap_err();
        assert!(
            refused.starts_with("invalid arguments"),
            "{arguments}: {refused}"
        );
    }
}

/// A project with a quota of `quota` bytes, and files up to 1 MiB.
fn with_quota(name: &str, quota: u64) -> Scratch {
    let limits = ProjectLimits {
        quota_bytes: Some(quota),
        max_file_bytes: 1 << 20,
        ..limits()
    };
    Scratch::with_limits(name, limits)
}

fn text(path: &str, size: usize) -> String {
    json!({"path": path, "text": "q".repeat(size)}).to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_quota_counts_what_files_take_and_an_overwrite_by_its_difference() {
    // Every entry counts for at least a block (4,096 bytes): docs/, docs/readme.md and
    // the three symlinks take 20,480. What the symlinks name outside counts for nothing.
    let scratch = with_quota("quota", 200_000);
    assert!(scratch
        .call("write_text_content", &text("one.txt", 100_000))
        .await
        .is_ok());
    let refused = scratch
        .call("write_text_content", &text("two.txt", 100_000))
        .await
        .unwrap_err();
    assert_eq!(
        refused,
        "writing `two.txt` would bring the project's files to 225280 bytes on disk, over its quota of 200000 bytes"
    );
    assert!(!scratch.root().join("two.txt").exists());
    // Counted by what it adds: 100,000 bytes replaced by 170,000.
    assert!(scratch
        .call("write_text_content", &text("one.txt", 170_000))
        .await
        .is_ok());
    assert!(scratch
        .call("write_text_content", &text("one.txt", 180_000))
        .await
        .is_err());
    assert_eq!(
        std::fs::read(scratch.root().join("one.txt")).unwrap().len(),
        170_000
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_files_and_directories_count_against_the_quota() {
    let scratch = with_quota("quota-empty", 40_000);
    let mut written = 0;
    for index in 0..100 {
        let arguments = json!({"path": format!("empty{index}"), "text": ""}).to_string();
        if scratch
            .call("write_text_content", &arguments)
            .await
            .is_err()
        {
            break;
        }
        written += 1;
    }
    // 20,480 bytes taken, and a block for each empty file.
    assert_eq!(written, 4, "empty files count a block each");
    let refused = scratch
        .call("create_directory", r#"{"path": "a"}"#)
        .await
        .unwrap_err();
    assert_eq!(refused, "creating `a` would bring the project's files to 40960 bytes on disk, over its quota of 40000 bytes");
    assert!(!scratch.root().join("a").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_quota_holds_for_concurrent_writes_through_two_agents_sharing_a_root() {
    let scratch = with_quota("quota-race", 100_000);
    let kept =
        crate::common::calls_through_two_agents(&scratch, 8, "write_text_content", |index| {
            text(&format!("file{index}"), 60_000)
        })
        .await;
    assert_eq!(kept, 1, "one write of 60,000 bytes fits in 100,000");
}

/// The size of writer `letter`'s version: each its own, so a mix of two shows.
fn size_of(letter: u8) -> usize {
    16 * 1024 + usize::from(letter % 32) * 997
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writes_to_one_path_leave_one_whole_version_and_readers_never_see_half() {
    let scratch = Scratch::new("concurrent");
    let target = scratch.root().join("page.md");
    std::fs::write(&target, vec![b'0'; size_of(b'0')]).unwrap();
    // Two agents on one root: their writes meet only at the file system.
    let projects = [
        scratch.project.clone(),
        Project::new(std::fs::File::open(scratch.root()).unwrap(), limits()),
    ];
    let reading = Arc::new(AtomicBool::new(true));
    let reader = {
        let (target, reading) = (target.clone(), reading.clone());
        std::thread::spawn(move || {
            let mut reads = 0;
            while reading.load(Ordering::Relaxed) {
                let bytes = std::fs::read(&target).unwrap();
                assert!(
                    bytes.iter().all(|&byte| byte == bytes[0]),
                    "a read saw two versions"
                );
                assert_eq!(bytes.len(), size_of(bytes[0]), "a read saw a torn version");
                reads += 1;
            }
            reads
        })
    };
    let writes: Vec<_> = (0..16u8)
        .map(|writer| {
            let project = projects[usize::from(writer) % 2].clone();
            let letter = b'a' + writer;
            let text = char::from(letter).to_string().repeat(size_of(letter));
            tokio::spawn(async move {
                let arguments = json!({"path": "page.md", "text": text}).to_string();
                for _ in 0..4 {
                    crate::common::call(&project, "write_text_content", &arguments)
                        .await
                        .unwrap();
                }
            })
        })
        .collect();
    for write in writes {
        write.await.unwrap();
    }
    reading.store(false, Ordering::Relaxed);
    let reads = reader.join().expect("every read saw one whole version");
    assert!(reads > 0);
    let last = std::fs::read(&target).unwrap();
    assert!((b'a'..b'a' + 16).contains(&last[0]));
    assert!(last.iter().all(|&byte| byte == last[0]) && last.len() == size_of(last[0]));
    let leftovers: Vec<_> = std::fs::read_dir(scratch.root())
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .filter(|name| name.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_replaces_the_name_and_never_writes_through_to_another_link_of_the_file() {
    use std::os::unix::fs::MetadataExt;
    let scratch = Scratch::new("hard-link");
    // `linked.txt` is another name of a file outside the root.
    std::fs::hard_link(
        scratch.dir.join("outside/keep.txt"),
        scratch.root().join("linked.txt"),
    )
    .unwrap();
    let before = std::fs::metadata(scratch.root().join("linked.txt"))
        .unwrap()
        .ino();
    let written = scratch
        .call(
            "write_text_content",
            r#"{"path": "linked.txt", "text": "new\n"}"#,
        )
        .await;
    assert_eq!(
        written,
        Ok(json!({"ok": true, "created": false, "size": 4}))
    );
    assert_eq!(
        std::fs::read_to_string(scratch.dir.join("outside/keep.txt")).unwrap(),
        "keep me\n"
    );
    assert_eq!(
        std::fs::read_to_string(scratch.root().join("linked.txt")).unwrap(),
        "new\n"
    );
    assert_ne!(
        std::fs::metadata(scratch.root().join("linked.txt"))
            .unwrap()
            .ino(),
        before
    );
}

#[test]
fn a_write_cancelled_while_it_waits_never_lands() {
    for cancelled in [true, false] {
        let scratch = Scratch::new(if cancelled {
            "cancel"
        } else {
            "cancel-control"
        });
        // Another process's change holds the root (an advisory lock on the directory).
        let held = std::fs::File::open(scratch.root()).unwrap();
        // SAFETY: `flock` on a descriptor this test owns.
        assert_eq!(unsafe { libc::flock(held.as_raw_fd(), libc::LOCK_EX) }, 0);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let project = scratch.project.clone();
        let call = runtime.spawn(async move {
            crate::common::call(
                &project,
                "write_text_content",
                r#"{"path": "late.md", "text": "late"}"#,
            )
            .await
        });
        runtime.block_on(async {
            tokio::time::sleep(Duration::from_millis(100)).await;
            assert!(!call.is_finished(), "the write waited for the lock");
        });
        let call = if cancelled {
            // What a deadline or a cancelled turn does to the call. An abort is only
            // asked for: the call's future is dropped once the task is polled again, so
            // the lock is let go after that, as a deadline's would be (else the write
            // could take the lock and land while the abort is still on its way).
            call.abort();
            assert!(runtime.block_on(call).unwrap_err().is_cancelled());
            None
        } else {
            Some(call)
        };
        // SAFETY: as above.
        unsafe { libc::flock(held.as_raw_fd(), libc::LOCK_UN) };
        if let Some(call) = call {
            assert_eq!(
                runtime.block_on(call).unwrap(),
                Ok(json!({"ok": true, "created": true, "size": 4}))
            );
        }
        // Dropping the runtime waits for its blocking jobs: the write's, if it went on.
        drop(runtime);
        assert_eq!(scratch.root().join("late.md").exists(), !cancelled);
        let leftovers = std::fs::read_dir(scratch.root())
            .unwrap()
            .filter(|entry| {
                entry
                    .as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".tmp")
            })
            .count();
        assert_eq!(leftovers, 0);
    }
}

/// A thread that swaps what a name in the root is, by atomic renames, until dropped.
struct Swapper {
    running: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Swapper {
    /// `name` becomes, in turn, each of `states` (prepared names in the same directory,
    /// hard-linked in so that each stays for the next round).
    fn start(dir: PathBuf, name: &'static str, states: [&'static str; 2]) -> Self {
        let swapped = dir.join(name);
        let swap = move |state: &str| {
            let next = dir.join(format!("{name}.next"));
            let _ = std::fs::hard_link(dir.join(state), &next);
            let _ = std::fs::rename(&next, dir.join(name));
        };
        // `name` exists before any call runs: a call that found it missing would create
        // it (a directory, say), which no rename can then replace, and the swaps would
        // stop (a thread started late on a loaded machine did that once). It starts as
        // the state the thread swaps in last: renaming a link onto another link to the
        // same file does nothing, and would leave `.next` in the way of every swap.
        swap(states[1]);
        assert!(std::fs::symlink_metadata(&swapped).is_ok(), "{swapped:?}");
        let running = Arc::new(AtomicBool::new(true));
        let thread = {
            let running = running.clone();
            std::thread::spawn(move || {
                while running.load(Ordering::Relaxed) {
                    for state in states {
                        swap(state);
                    }
                }
            })
        };
        Self {
            running,
            thread: Some(thread),
        }
    }
}

impl Drop for Swapper {
    fn drop(&mut self) {
        self.running.store(false, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Reads `path`, asserting that it never reads `outside` (what lies outside the root):
/// whether the read got in, and whether it was refused as leading outside.
async fn read_inside_or_refused(scratch: &Scratch, path: &str, outside: &str) -> (bool, bool) {
    let arguments = json!({ "path": path }).to_string();
    match scratch.call("get_text_content", &arguments).await {
        Ok(text) => {
            assert_ne!(text, json!(outside), "a read went outside");
            (true, false)
        }
        Err(refused) => (false, refused.contains("outside the project root")),
    }
}

/// Runs `round` until it has seen both outcomes it counts, or 30 s have passed.
async fn until_both(mut round: impl AsyncFnMut() -> (bool, bool)) {
    let (mut inside, mut outside) = (false, false);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !(inside && outside) && std::time::Instant::now() < deadline {
        let (was_inside, was_outside) = round().await;
        inside |= was_inside;
        outside |= was_outside;
    }
    assert!(
        inside && outside,
        "the swaps were not met both ways: inside {inside}, outside {outside}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_swapped_for_a_symlink_while_calls_run_never_leads_them_outside() {
    let scratch = Scratch::new("swap-dir");
    let root = scratch.root();
    std::fs::create_dir(root.join("real")).unwrap();
    std::fs::write(root.join("real/keep.txt"), "inside\n").unwrap();
    std::os::unix::fs::symlink("../outside", root.join("swap_out")).unwrap();
    std::os::unix::fs::symlink("real", root.join("swap_in")).unwrap();
    let outside = scratch.outside();
    let swapper = Swapper::start(root.clone(), "swap", ["swap_out", "swap_in"]);
    let mut round = 0;
    until_both(async || {
        round += 1;
        let write = json!({"path": "swap/keep.txt", "text": format!("round {round}")}).to_string();
        let _ = scratch.call("write_text_content", &write).await;
        let _ = scratch
            .call("create_directory", r#"{"path": "swap/made"}"#)
            .await;
        let _ = scratch
            .call(
                "move_path",
                r#"{"from": "swap/keep.txt", "to": "swap/kept.txt", "overwrite": true}"#,
            )
            .await;
        let _ = scratch
            .call(
                "move_path",
                r#"{"from": "swap/kept.txt", "to": "swap/keep.txt", "overwrite": true}"#,
            )
            .await;
        let _ = scratch
            .call("delete_path", r#"{"path": "swap/made", "recursive": true}"#)
            .await;
        let listing = scratch
            .call(
                "list_files",
                r#"{"path": "swap", "recursive": null, "max_depth": null, "max_entries": null}"#,
            )
            .await;
        if let Ok(listing) = &listing {
            assert!(
                !listing.to_string().contains("\"keep me\""),
                "a listing went outside: {listing}"
            );
        }
        read_inside_or_refused(&scratch, "swap/keep.txt", "keep me\n").await
    })
    .await;
    drop(swapper);
    assert_eq!(
        scratch.outside(),
        outside,
        "a call changed something outside the root"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_swapped_for_a_symlink_while_calls_run_is_never_read_or_written_through() {
    let scratch = Scratch::new("swap-file");
    let root = scratch.root();
    std::fs::write(root.join("plain.txt"), "plain\n").unwrap();
    std::os::unix::fs::symlink("../secret.txt", root.join("to_secret")).unwrap();
    let outside = scratch.outside();
    let swapper = Swapper::start(root.clone(), "page.txt", ["plain.txt", "to_secret"]);
    until_both(async || {
        let _ = scratch
            .call(
                "write_text_content",
                r#"{"path": "page.txt", "text": "written\n"}"#,
            )
            .await;
        // Not moved while it is the link (the move refuses a link), and never through it.
        let _ = scratch
            .call(
                "move_path",
                r#"{"from": "page.txt", "to": "moved.txt", "overwrite": true}"#,
            )
            .await;
        let _ = scratch
            .call(
                "move_path",
                r#"{"from": "moved.txt", "to": "page.txt", "overwrite": true}"#,
            )
            .await;
        let meta = scratch
            .call("read_path_meta", r#"{"path": "page.txt"}"#)
            .await;
        if let Ok(meta) = &meta {
            assert_ne!(
                meta["size"],
                json!("the host's secret\n".len()),
                "metadata of the secret"
            );
        }
        read_inside_or_refused(&scratch, "page.txt", "the host's secret\n").await
    })
    .await;
    drop(swapper);
    assert_eq!(
        scratch.outside(),
        outside,
        "a call changed something outside the root"
    );
}
