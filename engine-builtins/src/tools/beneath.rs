//! The file system layer alone keeps every tool beneath the root: paths that the text
//! checks would refuse first are handed to each tool's work unchecked, and cap-std
//! refuses them.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::PathBuf;

use plugin_sdk::project::{Project, ProjectLimits};
use plugin_sdk::ToolError;

use super::{
    create_directory, delete_path, get_text_content, list_files, move_path, read_path_meta,
    write_text_content,
};
use crate::path::ProjectPath;

/// A root beside a secret, removed on drop.
struct Scratch {
    dir: PathBuf,
    project: Project,
}

impl Scratch {
    fn new(name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("builtins-beneath-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("root/docs")).unwrap();
        fs::create_dir_all(dir.join("outside")).unwrap();
        fs::write(dir.join("secret.txt"), "secret\n").unwrap();
        symlink(dir.join("outside"), dir.join("root/abs_out")).unwrap();
        let limits = ProjectLimits {
            max_file_bytes: 1024,
            max_list_entries: 100,
            quota_bytes: None,
        };
        let project = Project::new(fs::File::open(dir.join("root")).unwrap(), limits);
        Self { dir, project }
    }

    /// Everything outside the root, by name.
    fn outside(&self) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(self.dir.join("outside"))
            .unwrap()
            .chain(fs::read_dir(&self.dir).unwrap())
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// Asserts that `answer` is cap-std's refusal of a path that leads out.
fn led_out<T: std::fmt::Debug>(answer: Result<T, ToolError>, tool: &str, path: &str) {
    let message = answer
        .map(|output| format!("{output:?}"))
        .unwrap_or_else(|error| error.message().to_owned());
    assert!(
        message.contains("outside the project root"),
        "`{tool}` on {path:?}: {message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paths_that_lead_out_are_refused_by_the_file_system_layer_itself() {
    let scratch = Scratch::new("unchecked");
    let host_secret = scratch.dir.join("secret.txt").display().to_string();
    let before = scratch.outside();
    let project = &scratch.project;
    for path in [
        "..",
        "../secret.txt",
        "docs/../../secret.txt",
        &host_secret,
        "abs_out/x",
    ] {
        let unchecked = || ProjectPath::unchecked(path);
        led_out(
            read_path_meta::meta_at(project, unchecked()).await,
            "read_path_meta",
            path,
        );
        led_out(
            get_text_content::text_at(project, unchecked()).await,
            "get_text_content",
            path,
        );
        led_out(
            list_files::listing_at(project, unchecked(), 2, 10).await,
            "list_files",
            path,
        );
        led_out(
            write_text_content::write_at(project, unchecked(), "x".into()).await,
            "write_text_content",
            path,
        );
        led_out(
            create_directory::create_at(project, unchecked()).await,
            "create_directory",
            path,
        );
        led_out(
            delete_path::delete_at(project, unchecked(), true).await,
            "delete_path",
            path,
        );
        let inside = || ProjectPath::parse("docs", crate::path::Root::Refused).unwrap();
        led_out(
            move_path::move_at(project, unchecked(), inside(), true).await,
            "move_path (from)",
            path,
        );
        led_out(
            move_path::move_at(project, inside(), unchecked(), true).await,
            "move_path (to)",
            path,
        );
    }
    assert_eq!(
        scratch.outside(),
        before,
        "something changed outside the root"
    );
}
