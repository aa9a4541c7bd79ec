//! The secrets the admin panel sets, and where they are kept ([`Home`]): on one engine,
//! a file under the data directory that only the engine's user can read
//! (`panel-secrets.json`, mode 0600); on replicas (a `[database]`), the shared database,
//! which every replica reads at start-up and follows while it serves. Either way they
//! join the configuration below the environment's variables (a variable still wins) and
//! above the configuration file's (`EngineConfig::add_panel_secrets`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use engine_core::config::DatabaseConfig;
use engine_core::stores::{PanelSecretStore, PanelSecretValues};
use engine_core::OpenPanelSecrets;

/// Agent → key → value.
pub(crate) type Values = PanelSecretValues;

/// The file's name under the data directory.
const FILE: &str = "panel-secrets.json";

/// Where the panel's secrets are kept.
pub(crate) enum Home {
    File(SecretsFile),
    /// The shared database's, not read: a command that opens no database (a check).
    Unread,
    Shared(Arc<SharedSecrets>),
}

impl Home {
    /// The values kept.
    pub(crate) fn load(&self) -> Result<Values, String> {
        match self {
            Self::File(file) => file.load(),
            Self::Shared(shared) => shared.load(),
            Self::Unread => Ok(Values::new()),
        }
    }

    /// Keeps `agent`'s secret `key` as `value` (`None`: forgets it), `values` being every
    /// value with that change made.
    pub(crate) fn keep(
        &self,
        values: &Values,
        agent: &str,
        key: &str,
        value: Option<&str>,
    ) -> Result<(), String> {
        match self {
            Self::File(file) => file.store(values).map_err(|error| error.to_string()),
            Self::Shared(shared) => shared.set(agent, key, value),
            Self::Unread => Err("this command opens no database".to_owned()),
        }
    }
}

/// The panel's secrets in a file under the data directory.
pub(crate) struct SecretsFile {
    path: PathBuf,
}

impl SecretsFile {
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
            // No file yet; or no data directory, which the engine's start-up reports.
            Err(error)
                if matches!(
                    error.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                Ok(Values::new())
            }
            Err(error) => Err(format!("{} could not be read: {error}", self.path.display())),
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

/// The panel's secrets in the shared database, with the runtime its connections live
/// on: the configuration is read on blocking threads (start-up, a reload, a panel's
/// change), which wait on it.
pub(crate) struct SharedSecrets {
    store: Arc<dyn PanelSecretStore>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl SharedSecrets {
    /// Connects with `open` to the database `database` names.
    pub(crate) fn open(open: OpenPanelSecrets, database: &DatabaseConfig) -> Result<Self, String> {
        let store = open(database).map_err(|error| {
            format!("the admin panel's secrets in the shared database: {error}")
        })?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("panel-secrets")
            .enable_all()
            .build()
            .map_err(|error| error.to_string())?;
        Ok(Self {
            store,
            runtime: Some(runtime),
        })
    }

    fn runtime(&self) -> &tokio::runtime::Runtime {
        self.runtime
            .as_ref()
            .expect("the runtime lives as long as the store")
    }

    pub(crate) fn load(&self) -> Result<Values, String> {
        self.runtime()
            .block_on(self.store.load())
            .map_err(|error| format!("the admin panel's secrets could not be read: {error}"))
    }

    fn set(&self, agent: &str, key: &str, value: Option<&str>) -> Result<(), String> {
        self.runtime()
            .block_on(self.store.set(agent, key, value))
            .map_err(|error| format!("the admin panel's secret could not be kept: {error}"))
    }
}

impl Drop for SharedSecrets {
    fn drop(&mut self) {
        // Dropped by a task of the server's runtime, where a runtime may not be dropped
        // waiting.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
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
        let secrets = SecretsFile::in_dir(&dir);
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
