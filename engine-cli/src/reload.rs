//! `SIGHUP` while serving: the configuration file is read again and the engine's agents
//! and providers replaced with it (the extensions directory reloads on its own watch);
//! and the same reload of a text the admin panel changed, written once the engine took
//! it ([`PanelConfig`]).

use std::future::Future;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use engine_core::config::EngineConfig;
use engine_core::{Engine, OpenPanelSecrets};

use crate::files;
use crate::panel_secrets::{self, Home, SecretsFile, SharedSecrets, Values};

/// Where the configuration came from, to read it again the same way: its file, and the
/// secret variables taken from the environment at start-up (removed from it since).
pub(crate) struct ConfigSource {
    file: PathBuf,
    variables: Vec<(String, String)>,
    /// One reload at a time: a `SIGHUP`, a panel's edit and a replica following another
    /// do not interleave.
    reloading: Mutex<()>,
    /// Opens the panel's secrets on a shared database (the image's backend), and what it
    /// opened: once, on the first read of a configuration with a `[database]`.
    open_shared: Option<OpenPanelSecrets>,
    shared: OnceLock<Arc<SharedSecrets>>,
    /// Whether the command opens no database (a check): the shared database's panel
    /// secrets are then not read.
    offline: bool,
    /// The panel's secrets the engine last tried: a replica reloads when the shared
    /// database's differ, and runs with these while the database cannot be read.
    seen: Mutex<Values>,
    /// Whether the shared database could not be read last time (said once).
    unreachable: AtomicBool,
}

/// How often a replica looks for the panel's secrets another replica set.
const FOLLOW_EVERY: Duration = Duration::from_secs(3);

impl ConfigSource {
    pub(crate) fn new(
        file: PathBuf,
        variables: Vec<(String, String)>,
        open_shared: Option<OpenPanelSecrets>,
        offline: bool,
    ) -> Arc<Self> {
        Arc::new(Self {
            file,
            variables,
            reloading: Mutex::default(),
            open_shared,
            shared: OnceLock::new(),
            offline,
            seen: Mutex::default(),
            unreachable: AtomicBool::new(false),
        })
    }

    /// On replicas, the task that follows the panel's secrets in the shared database
    /// (another replica's panel set them), reloading `engine` when they change. Needs a
    /// Tokio runtime.
    pub(crate) fn follow_shared_secrets(
        self: Arc<Self>,
        engine: Arc<Engine>,
    ) -> Option<impl Future<Output = ()>> {
        self.shared.get()?;
        Some(async move {
            loop {
                tokio::time::sleep(FOLLOW_EVERY).await;
                let (source, engine) = (Arc::clone(&self), Arc::clone(&engine));
                let following =
                    tokio::task::spawn_blocking(move || source.reload_if_secrets_changed(&engine));
                if let Err(error) = following.await {
                    tracing::error!("following the panel's secrets panicked: {error}");
                }
            }
        })
    }

    /// Reloads `engine` when the shared database's panel secrets are not those it last
    /// tried: once per change (a change the engine refuses is not tried again every few
    /// seconds; the next change, a `SIGHUP` or a panel's edit tries again). Read outside
    /// the lock: a database slow to answer holds up no `SIGHUP` or panel edit.
    fn reload_if_secrets_changed(&self, engine: &Engine) {
        let Some(shared) = self.shared.get() else {
            return;
        };
        let Some(values) = self.shared_values(shared) else {
            return;
        };
        if values == *self.seen() {
            return;
        }
        let _one = self.lock();
        self.reload_locked(
            engine,
            "the admin panel's secrets changed on another replica",
        );
    }

    /// The shared database's panel secrets, or `None` while it cannot be read (said
    /// once when it goes, once when it is back).
    fn shared_values(&self, shared: &SharedSecrets) -> Option<Values> {
        match shared.load() {
            Ok(values) => {
                if self.unreachable.swap(false, Ordering::Relaxed) {
                    tracing::info!("the admin panel's secrets can be read again");
                }
                Some(values)
            }
            Err(error) => {
                if !self.unreachable.swap(true, Ordering::Relaxed) {
                    tracing::warn!(
                        "{error}; the engine keeps the ones it has until it can read them"
                    );
                }
                None
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, ()> {
        self.reloading
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn seen(&self) -> MutexGuard<'_, Values> {
        self.seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Where the panel's secrets of `config` are kept: the shared database its
    /// `[database]` names (when the image has the backend), else a file under its data
    /// directory.
    fn home(&self, config: &EngineConfig) -> Result<Home, String> {
        let (Some(database), Some(open)) = (&config.database, self.open_shared) else {
            return Ok(Home::File(SecretsFile::in_dir(&config.data_dir())));
        };
        if self.offline {
            return Ok(Home::Unread);
        }
        if let Some(shared) = self.shared.get() {
            return Ok(Home::Shared(Arc::clone(shared)));
        }
        let shared = Arc::new(SharedSecrets::open(open, database)?);
        Ok(Home::Shared(Arc::clone(self.shared.get_or_init(|| shared))))
    }

    /// Listens for `SIGHUP` from now on (so that one sent while the server starts is not
    /// the default's end of the process), and gives the task that reloads `engine` on
    /// each, logging what changed or why nothing did. Needs a Tokio runtime.
    pub(crate) fn reload_on_hangup(
        self: Arc<Self>,
        engine: Arc<Engine>,
    ) -> Option<impl Future<Output = ()>> {
        use tokio::signal::unix::{signal, SignalKind};
        let mut hangup = signal(SignalKind::hangup())
            .inspect_err(|error| {
                tracing::error!("the configuration will not reload on SIGHUP: {error}");
            })
            .ok()?;
        Some(async move { self.reload_each(&mut hangup, engine).await })
    }

    async fn reload_each(
        self: Arc<Self>,
        hangup: &mut tokio::signal::unix::Signal,
        engine: Arc<Engine>,
    ) {
        while hangup.recv().await.is_some() {
            let (source, engine) = (Arc::clone(&self), Arc::clone(&engine));
            // Reading the file and building the agents (their plugins' states, project
            // roots) may block: off the async workers.
            let reloading = tokio::task::spawn_blocking(move || source.reload(&engine));
            if let Err(error) = reloading.await {
                tracing::error!("the configuration reload panicked: {error}");
            }
        }
    }

    fn reload(&self, engine: &Engine) {
        let _one = self.lock();
        self.reload_locked(engine, "SIGHUP");
    }

    /// Reloads `engine` from the file and the panel's secrets, for `why`; the caller holds
    /// the lock.
    fn reload_locked(&self, engine: &Engine, why: &str) {
        match reload_with(engine, self.read()) {
            Ok(reloaded) => tracing::info!(
                file = %self.file.display(),
                added = ?reloaded.added,
                removed = ?reloaded.removed,
                kept = ?reloaded.kept,
                "{why}: configuration reloaded"
            ),
            Err(error) => tracing::error!(
                file = %self.file.display(),
                "{why}: the configuration was not reloaded, and the engine keeps the one it has: {error}"
            ),
        }
    }

    /// The configuration: the file, the secrets the panel set (in a file under the data
    /// directory the file names, or the shared database its `[database]` names), and the
    /// environment's secret variables, which win.
    pub(crate) fn read(&self) -> Result<EngineConfig, String> {
        self.read_as(None, None)
    }

    /// [`read`](Self::read), with `text` in place of the file's and `panel` in place of
    /// the panel's secrets, when given: a change tried before it is kept.
    fn read_as(&self, text: Option<&str>, panel: Option<&Values>) -> Result<EngineConfig, String> {
        let variables = self.variables.clone();
        let mut config = match text {
            Some(text) => EngineConfig::read_text(&self.file, text, variables),
            None => EngineConfig::read(Some(&self.file), variables),
        }
        .map_err(|error| error.to_string())?;
        let kept;
        let panel = match panel {
            Some(panel) => panel,
            None => {
                kept = match self.home(&config)? {
                    // A database that cannot be read keeps no reload or edit of the file
                    // from being made: the secrets last read stand in.
                    Home::Shared(shared) => self
                        .shared_values(&shared)
                        .unwrap_or_else(|| self.seen().clone()),
                    home => home.load()?,
                };
                *self.seen() = kept.clone();
                &kept
            }
        };
        config.add_panel_secrets(panel_secrets::triples(panel));
        Ok(config)
    }
}

/// The configuration as the admin panel changes it (`engine serve`): the file its tool
/// switches write, and the secrets it sets.
pub(crate) struct PanelConfig {
    pub(crate) source: Arc<ConfigSource>,
    pub(crate) engine: Arc<Engine>,
}

impl PanelConfig {
    /// Reloads the engine with `config`, then keeps the change with `keep`; a change
    /// the engine refuses is not kept, and one that cannot be kept is undone.
    fn change(
        &self,
        what: &str,
        config: Result<EngineConfig, String>,
        keep: impl FnOnce() -> Result<(), String>,
    ) -> Result<(), String> {
        let reloaded = reload_with(&self.engine, config).map_err(|error| {
            format!("the engine refused the change, and nothing was written: {error}")
        })?;
        if let Err(error) = keep() {
            // The engine runs what the files do not say: back to what they say.
            let restored = match reload_with(&self.engine, self.source.read()) {
                Ok(_) => "the engine is back on the configuration the files hold",
                Err(_) => "and the engine could not read the files back: it runs the change",
            };
            return Err(format!("{what} could not be written ({error}); {restored}"));
        }
        tracing::info!(
            added = ?reloaded.added,
            removed = ?reloaded.removed,
            kept = ?reloaded.kept,
            "the admin panel changed {what}, and the engine reloaded it"
        );
        Ok(())
    }
}

impl engine_server::Configuration for PanelConfig {
    fn edit(
        &self,
        change: &mut dyn FnMut(&str) -> Result<Option<String>, String>,
    ) -> Result<bool, String> {
        let source = &self.source;
        let _one = source.lock();
        let file = &source.file;
        let text = std::fs::read_to_string(file)
            .map_err(|error| format!("{} could not be read: {error}", file.display()))?;
        let Some(changed) = change(&text)? else {
            return Ok(false);
        };
        let what = file.display().to_string();
        self.change(&what, source.read_as(Some(&changed), None), || {
            files::replace(file, changed.as_bytes(), None).map_err(|error| error.to_string())
        })?;
        Ok(true)
    }

    fn set_secret(&self, agent: &str, key: &str, value: Option<&str>) -> Result<(), String> {
        let source = &self.source;
        let _one = source.lock();
        // Read once, without the panel's secrets: where they are kept is in it.
        let mut config = source.read_as(None, Some(&Values::new()))?;
        let home = source.home(&config)?;
        let mut values = home.load()?;
        match value {
            Some(value) => {
                values
                    .entry(agent.to_owned())
                    .or_default()
                    .insert(key.to_owned(), value.to_owned());
            }
            None => {
                if let Some(keys) = values.get_mut(agent) {
                    keys.remove(key);
                    if keys.is_empty() {
                        values.remove(agent);
                    }
                }
            }
        }
        config.add_panel_secrets(panel_secrets::triples(&values));
        self.change("the panel's secrets", Ok(config), || {
            home.keep(&values, agent, key, value)
        })?;
        *source.seen() = values;
        Ok(())
    }
}

/// `engine` reloaded with `config`, when it was read: what changed, or why nothing did.
fn reload_with(
    engine: &Engine,
    config: Result<EngineConfig, String>,
) -> Result<engine_core::Reloaded, String> {
    config.and_then(|config| engine.reload(config).map_err(|error| error.to_string()))
}
