//! The secrets the admin panel sets: a file under the data directory that only the
//! engine's user can read (`panel-secrets.json`, mode 0600), whose values join the
//! configuration below the environment's (a variable still wins) and above the
//! configuration file's (`EngineConfig::add_panel_secrets`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Agent → key → value.
pub(crate) type Values = BTreeMap<String, BTreeMap<String, String>>;

/// The file's name under the data directory.
const FILE: &str = "panel-secrets.json";

pub(crate) struct PanelSecrets {
    path: PathBuf,
}

impl PanelSecrets {
    pub(crate) fn in_dir(data_dir: &Path) -> Self {
        Self {
            path: data_dir.join(FILE),
        }
    }

    /// The values kept; none when there is no file yet.
    pub(crate) fn load(&self) -> Result<Values, String> {
        match std::fs::read(&self.path) {
            // The error's position only: its message may quote a value.
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|error| {
                format!(
                    "{} is not the panel's secrets (line {}, column {}): correct it, or remove it and set them again",
                    self.path.display(),
                    error.line(),
                    error.column()
                )
            }),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(Values::new()),
            Err(error) => Err(format!(
                "{} could not be read: {error}",
                self.path.display()
            )),
        }
    }

    /// Writes `values` at once, in a file only the engine's user can read.
    pub(crate) fn store(&self, values: &Values) -> std::io::Result<()> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let json = serde_json::to_vec_pretty(values).expect("strings serialize");
        crate::files::replace(&self.path, &json, Some(0o600))
    }
}

/// `values` as (agent, key, value), as [`EngineConfig::add_panel_secrets`] takes them.
///
/// [`EngineConfig::add_panel_secrets`]: engine_core::config::EngineConfig::add_panel_secrets
pub(crate) fn triples(values: &Values) -> impl Iterator<Item = (String, String, String)> + '_ {
    values.iter().flat_map(|(agent, keys)| {
        keys.iter()
            .map(move |(key, value)| (agent.clone(), key.clone(), value.clone()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_is_only_the_engines_users_and_reads_back() {
        let dir = std::env::temp_dir().join(format!("panel-secrets-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let secrets = PanelSecrets::in_dir(&dir);
        assert_eq!(secrets.load().unwrap(), Values::new());
        let mut values = Values::new();
        values
            .entry("bot".into())
            .or_default()
            .insert("crm_api_key".into(), "k-1".into());
        secrets.store(&values).unwrap();
        assert_eq!(secrets.load().unwrap(), values);
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(dir.join(FILE)).unwrap().permissions(),
        );
        assert_eq!(mode & 0o777, 0o600);
        let named: Vec<(String, String, String)> = triples(&values).collect();
        assert_eq!(
            named,
            [("bot".to_owned(), "crm_api_key".to_owned(), "k-1".to_owned())]
        );
        // A file of another shape is refused by its position, never quoting a value.
        std::fs::write(dir.join(FILE), r#"{"bot": "sk-live-1234"}"#).unwrap();
        let refused = secrets.load().unwrap_err();
        assert!(refused.contains("(line 1, column"), "{refused}");
        assert!(!refused.contains("sk-live-1234"), "{refused}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
