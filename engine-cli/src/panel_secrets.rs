//! The secrets the admin panel sets: a file under the data directory that only the
//! engine's user can read (`panel-secrets.json`, mode 0600), whose values join the
//! configuration as `ENGINE_SECRET__<agent>__<key>` variables would, below the
//! environment's (a variable still wins) and above the configuration file's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use engine_core::config::SECRET_ENV_PREFIX;

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
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|error| {
                format!(
                    "{} is not the panel's secrets: {error}",
                    self.path.display()
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

/// `values` as secret variables, for the agents in `agents` only (one the file no
/// longer has keeps its values here, unread, rather than stop the engine).
pub(crate) fn variables<'a>(
    values: &'a Values,
    agents: impl Fn(&str) -> bool + 'a,
) -> impl Iterator<Item = (String, String)> + 'a {
    values
        .iter()
        .filter(move |(agent, _)| agents(agent))
        .flat_map(|(agent, keys)| {
            keys.iter().map(move |(key, value)| {
                (format!("{SECRET_ENV_PREFIX}{agent}__{key}"), value.clone())
            })
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
        let named: Vec<(String, String)> = variables(&values, |agent| agent == "bot").collect();
        assert_eq!(
            named,
            [(
                "ENGINE_SECRET__bot__crm_api_key".to_owned(),
                "k-1".to_owned()
            )]
        );
        assert_eq!(variables(&values, |_| false).count(), 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
