//! The model's paths: text checked into a relative path beneath the project root before
//! any file is touched.
//!
//! These checks make the refusals plain ("`..` is not allowed"); confinement itself does
//! not rest on them: every path is then opened beneath the root's handle by `cap-std`,
//! which refuses whatever leads out (a symlink included) however the text was spelled.

use std::path::{Path, PathBuf};

use plugin_sdk::ToolError;

/// The longest path accepted, in bytes.
pub const MAX_PATH_BYTES: usize = 1024;

/// The longest name (one component of a path) accepted, in bytes: Linux's own limit.
pub const MAX_NAME_BYTES: usize = 255;

/// The most names a path may have: deeper trees cost an open directory per level to
/// measure, and no project needs them.
pub const MAX_DEPTH_NAMES: usize = 32;

/// A path the model gave, checked: relative, within the root, each name plain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProjectPath {
    names: Vec<String>,
}

/// Whether a path may name the project root itself (`""` or `"."`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Root {
    /// It may: listing the root, reading its metadata.
    Allowed,
    /// It may not: the tool needs a file or a directory beneath it.
    Refused,
}

impl ProjectPath {
    /// Checks `text`, refusing with a sentence the model can act on.
    pub fn parse(text: &str, root: Root) -> Result<Self, ToolError> {
        refuse_spelling(text)?;
        let mut names = Vec::new();
        for name in text.split('/') {
            match name {
                "" | "." => {}
                ".." => {
                    return Err(ToolError::new(
                        "`..` is not allowed: paths go down from the project root, never up",
                    ))
                }
                name if name.len() > MAX_NAME_BYTES => {
                    return Err(ToolError::new(format!(
                        "the name `{}…` is {} bytes long; a name may have at most {MAX_NAME_BYTES}",
                        truncated(name),
                        name.len()
                    )))
                }
                name => names.push(name.to_owned()),
            }
        }
        if names.len() > MAX_DEPTH_NAMES {
            return Err(ToolError::new(format!(
                "the path has {} names; a path may go at most {MAX_DEPTH_NAMES} deep",
                names.len()
            )));
        }
        if names.is_empty() && root == Root::Refused {
            return Err(ToolError::new(
                "the path names the project root itself: give the path of a file or directory beneath it",
            ));
        }
        Ok(Self { names })
    }

    /// `text` taken as it is, unchecked and whole (an absolute path stays absolute): for
    /// the tests that show the file system layer refusing what these checks would have
    /// caught first.
    #[cfg(test)]
    pub fn unchecked(text: &str) -> Self {
        Self {
            names: vec![text.to_owned()],
        }
    }

    /// The path beneath the root (empty for the root itself).
    pub fn relative(&self) -> PathBuf {
        self.names.iter().collect()
    }

    /// Whether it is the root itself.
    pub fn is_root(&self) -> bool {
        self.names.is_empty()
    }

    /// How many names it has (0 for the root).
    pub fn depth(&self) -> usize {
        self.names.len()
    }

    /// Whether it lies beneath `ancestor` (not at it).
    pub fn is_beneath(&self, ancestor: &Self) -> bool {
        self.names.len() > ancestor.names.len() && self.names.starts_with(&ancestor.names)
    }

    /// Its parent directory and its last name; `None` for the root.
    pub fn split_last(&self) -> Option<(PathBuf, &str)> {
        let (last, parents) = self.names.split_last()?;
        Some((parents.iter().collect(), last))
    }

    /// How messages show it: the names joined by `/`, `.` for the root. Never a host
    /// path: only what the model wrote, cleaned.
    pub fn shown(&self) -> String {
        if self.names.is_empty() {
            ".".to_owned()
        } else {
            self.names.join("/")
        }
    }

    /// The path of `name` inside it, as listings show it.
    pub fn join_shown(prefix: &str, name: &str) -> String {
        if prefix.is_empty() {
            name.to_owned()
        } else {
            format!("{prefix}/{name}")
        }
    }
}

/// What no path may be spelled with, whatever it would resolve to.
fn refuse_spelling(text: &str) -> Result<(), ToolError> {
    if text.len() > MAX_PATH_BYTES {
        return Err(ToolError::new(format!(
            "the path is {} bytes long; a path may have at most {MAX_PATH_BYTES}",
            text.len()
        )));
    }
    if text.contains('\0') {
        return Err(ToolError::new("the path contains a NUL character"));
    }
    if text.chars().any(char::is_control) {
        return Err(ToolError::new(
            "the path contains a control character (a line break, a tab...): names here are plain text",
        ));
    }
    if text.contains('\\') {
        return Err(ToolError::new(
            "the path contains `\\`: separate directories with `/` (`docs/intro/index.page`)",
        ));
    }
    let bytes = text.as_bytes();
    if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
        return Err(ToolError::new(
            "the path starts with a drive letter: paths are relative to the project root, such as `docs/intro`",
        ));
    }
    if text.starts_with('/') || Path::new(text).is_absolute() {
        return Err(ToolError::new(
            "the path is absolute: paths are relative to the project root (`docs/intro`, not `/docs/intro`)",
        ));
    }
    Ok(())
}

/// The start of an over-long name, for a message.
fn truncated(name: &str) -> &str {
    let mut end = 32.min(name.len());
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    &name[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &str) -> String {
        ProjectPath::parse(text, Root::Allowed)
            .expect_err(text)
            .message()
            .to_owned()
    }

    #[test]
    fn plain_paths_are_kept_name_by_name() {
        let path = ProjectPath::parse("docs/./intro//index.page", Root::Refused).unwrap();
        assert_eq!(path.shown(), "docs/intro/index.page");
        assert_eq!(path.relative(), PathBuf::from("docs/intro/index.page"));
        let (parent, name) = path.split_last().unwrap();
        assert_eq!((parent, name), (PathBuf::from("docs/intro"), "index.page"));
        assert_eq!(path.depth(), 3);
        let docs = ProjectPath::parse("docs", Root::Refused).unwrap();
        assert!(path.is_beneath(&docs));
        assert!(!docs.is_beneath(&path));
        assert!(!docs.is_beneath(&docs));
        // A name that starts like another is not beneath it.
        let docs2 = ProjectPath::parse("docs2/intro", Root::Refused).unwrap();
        assert!(!docs2.is_beneath(&docs));
    }

    #[test]
    fn the_root_is_refused_where_a_file_is_needed() {
        for root in ["", ".", "./", "././"] {
            let refused = ProjectPath::parse(root, Root::Refused).unwrap_err();
            assert!(
                refused.message().contains("project root itself"),
                "{root:?}"
            );
            assert!(
                ProjectPath::parse(root, Root::Allowed).unwrap().is_root(),
                "{root:?}"
            );
        }
        let refused = ProjectPath::parse("/", Root::Allowed).unwrap_err();
        assert!(refused.message().contains("absolute"));
    }

    #[test]
    fn names_and_paths_at_their_limits_are_kept() {
        let name = "n".repeat(MAX_NAME_BYTES);
        assert!(ProjectPath::parse(&name, Root::Refused).is_ok());
        let path = ("a".repeat(200) + "/").repeat(4) + &"c".repeat(220);
        assert_eq!(path.len(), MAX_PATH_BYTES);
        assert!(ProjectPath::parse(&path, Root::Refused).is_ok());
        assert!(ProjectPath::parse(&"a/".repeat(32), Root::Refused).is_ok());
        // A long name of many-byte characters is cut at a character in the message.
        assert!(refused(&"€".repeat(100)).contains("is 300 bytes long"));
    }

    #[test]
    fn each_bad_spelling_is_refused_with_its_reason() {
        assert!(refused("../etc/passwd").contains("`..`"));
        assert!(refused("docs/../../x").contains("`..`"));
        assert!(refused("/etc/passwd").contains("absolute"));
        assert!(refused("C:\\Windows").contains("`\\`"));
        assert!(refused("C:/Windows").contains("drive letter"));
        assert!(refused("c:x").contains("drive letter"));
        assert!(refused("docs\\intro").contains("`\\`"));
        assert!(refused("a\0b").contains("NUL"));
        assert!(refused("a\nb").contains("control character"));
        assert!(refused(&"a".repeat(256)).contains("256 bytes"));
        assert!(refused(&"a/".repeat(600)).contains("at most 1024"));
        assert!(refused(&"a/".repeat(33)).contains("at most 32 deep"));
    }
}
