//! `get_text_content`: the text of a file.

use std::io::Read;

use std::path::Path;

use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt};
use plugin_sdk::prelude::*;
use plugin_sdk::project::Project;

use super::{root_of, PathArgs};
use crate::path::{ProjectPath, Root};
use crate::refusal::{Doing, OrRefuse};
use crate::work::off_the_workers;

/// Read and return the text content of a file, given its path relative to the project
/// root. A file that is not UTF-8 text, or larger than the project's limit, is refused
/// with the reason.
#[define_tool(
    summary = { "en-US": "Read a text file", "it-IT": "Leggi un file di testo" },
    category = "files",
    read_only,
    idempotent,
    open_world = false,
    example = r#"{"path": "docs/intro/index.page"}"#,
)]
pub async fn get_text_content(args: PathArgs, project: &Project) -> Result<String, ToolError> {
    let path = ProjectPath::parse(&args.path, Root::Refused)?;
    text_at(project, path).await
}

/// The text of `path`, checked or not: the file system layer keeps it beneath the root
/// either way.
pub(crate) async fn text_at(project: &Project, path: ProjectPath) -> Result<String, ToolError> {
    let root = root_of(project)?;
    let max = project.limits().max_file_bytes;
    off_the_workers(move |job| {
        let shown = path.shown();
        let relative = path.relative();
        // Looked at first, so that a FIFO or a device is never even opened...
        let meta = root.metadata(&relative).or_refuse(Doing::Reading, &shown)?;
        refuse_unless_a_file(meta.file_type(), &shown)?;
        // ...and opened without blocking, then looked at again through the handle, in
        // case something else was swapped in between.
        let mut file = open_without_waiting(&root, &relative).or_refuse(Doing::Reading, &shown)?;
        let meta = file.metadata().or_refuse(Doing::Reading, &shown)?;
        refuse_unless_a_file(meta.file_type(), &shown)?;
        refuse_over(meta.len(), max, &shown)?;
        job.go_on()?;
        // At most one byte past the limit: a file that grew since is refused, not read
        // whole.
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        file.by_ref()
            .take(max.saturating_add(1))
            .read_to_end(&mut bytes)
            .or_refuse(Doing::Reading, &shown)?;
        refuse_over(bytes.len() as u64, max, &shown)?;
        text(bytes, &shown)
    })
    .await
}

/// Opens `relative` beneath `dir` for reading, never waiting: a FIFO opens at once
/// (without `O_NONBLOCK` it would wait for a writer), and a terminal never becomes the
/// process's.
fn open_without_waiting(dir: &Dir, relative: &Path) -> std::io::Result<cap_std::fs::File> {
    let mut options = OpenOptions::new();
    options
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    dir.open_with(relative, &options)
}

fn refuse_unless_a_file(file_type: cap_std::fs::FileType, shown: &str) -> Result<(), ToolError> {
    if file_type.is_file() {
        Ok(())
    } else if file_type.is_dir() {
        Err(ToolError::new(format!(
            "`{shown}` is a directory: list it with `list_files`"
        )))
    } else {
        Err(ToolError::new(format!(
            "`{shown}` is not a regular file (a FIFO, a socket or a device), so it is not read"
        )))
    }
}

fn refuse_over(size: u64, max: u64, shown: &str) -> Result<(), ToolError> {
    if size > max {
        Err(ToolError::new(format!(
            "`{shown}` is {size} bytes, over the project's limit of {max} bytes per file"
        )))
    } else {
        Ok(())
    }
}

/// The bytes as text: UTF-8 with no NUL byte. (Valid UTF-8 can hold NUL, and binary
/// formats often do early on; text files almost never.)
fn text(bytes: Vec<u8>, shown: &str) -> Result<String, ToolError> {
    let binary = || {
        ToolError::new(format!(
            "`{shown}` is not text (it is not UTF-8, or it holds NUL bytes): this tool reads text files only"
        ))
    };
    if bytes.contains(&0) {
        return Err(binary());
    }
    String::from_utf8(bytes).map_err(|_| binary())
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_fifo_opens_at_once_though_no_writer_is_there() {
        let dir = std::env::temp_dir().join(format!("builtins-fifo-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let root = Dir::from_std_file(std::fs::File::open(&dir).unwrap());
        let (opened, waited) = mpsc::channel();
        std::thread::spawn(move || {
            let file = open_without_waiting(&root, Path::new("fifo"));
            opened
                .send(file.map(|file| file.metadata().unwrap().is_file()))
                .unwrap();
        });
        let answer = waited.recv_timeout(Duration::from_secs(10));
        if answer.is_err() {
            // A writer releases the open that waits, so that the thread ends.
            let _ = std::fs::OpenOptions::new().write(true).open(&fifo);
        }
        let _ = std::fs::remove_dir_all(&dir);
        let is_file = answer.expect("the open waited for a writer").unwrap();
        assert!(
            !is_file,
            "the handle is the FIFO's, seen as no regular file"
        );
    }
}
