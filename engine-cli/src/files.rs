//! Files the engine rewrites while it runs (the configuration the panel edits, the
//! secrets it sets): written whole or not at all.

use std::io::Write as _;
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::Path;

/// Writes `bytes` over `file` at once: a new file beside its target (a link is followed,
/// and stays a link), created by this call only (never an existing file or a link an
/// attacker placed there) with `mode`, or the file's own permissions when `None`;
/// synced, renamed over the target, and the directory synced. A reader never sees half
/// of it, and a crash leaves the old one. An existing file its owner made read-only is
/// not written.
pub(crate) fn replace(file: &Path, bytes: &[u8], mode: Option<u32>) -> std::io::Result<()> {
    let (target, mode) = match std::fs::canonicalize(file) {
        Ok(target) => {
            let permissions = std::fs::metadata(&target)?.permissions();
            if permissions.readonly() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::PermissionDenied,
                    "the file is read-only: its owner keeps it as it is",
                ));
            }
            (target, mode.unwrap_or(permissions.mode() & 0o777))
        }
        Err(error) => match mode {
            Some(mode) if error.kind() == std::io::ErrorKind::NotFound => (file.to_owned(), mode),
            _ => return Err(error),
        },
    };
    let dir = target.parent().unwrap_or(Path::new("/"));
    let name = target
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut suffix = [0u8; 8];
    getrandom::fill(&mut suffix).map_err(std::io::Error::other)?;
    let suffix: String = suffix.iter().map(|byte| format!("{byte:02x}")).collect();
    let beside = dir.join(format!(".{name}.{suffix}"));
    let written = (|| {
        let mut out = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&beside)?;
        out.write_all(bytes)?;
        out.sync_all()?;
        std::fs::rename(&beside, &target)?;
        // The rename is done: a directory that cannot be synced (some file systems) does
        // not undo it.
        let _ = std::fs::File::open(dir).and_then(|dir| dir.sync_all());
        Ok(())
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&beside);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("engine-files-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_file_is_replaced_keeping_its_permissions_and_a_link_stays_a_link() {
        let dir = scratch("link");
        let real = dir.join("engine.toml");
        std::fs::write(&real, "old").unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
        let link = dir.join("linked.toml");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        replace(&link, b"new", None).unwrap();
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(mode(&real), 0o640);
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(left.len(), 2, "no file is left beside: {left:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_read_only_file_is_not_written_and_a_new_one_gets_the_mode_asked() {
        let dir = scratch("modes");
        let kept = dir.join("kept.toml");
        std::fs::write(&kept, "old").unwrap();
        std::fs::set_permissions(&kept, std::fs::Permissions::from_mode(0o444)).unwrap();
        assert!(replace(&kept, b"new", None).is_err());
        assert_eq!(std::fs::read_to_string(&kept).unwrap(), "old");
        let secret = dir.join("secrets.json");
        replace(&secret, b"{}", Some(0o600)).unwrap();
        assert_eq!(mode(&secret), 0o600);
        std::fs::set_permissions(&kept, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
