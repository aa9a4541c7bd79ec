//! `SIGHUP` while serving: the configuration file is read again and the engine's agents
//! and providers replaced with it (the extensions directory reloads on its own watch);
//! and the same reload of a text the admin panel changed, written once the engine took
//! it ([`PanelConfig`]).

use std::future::Future;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use engine_core::config::EngineConfig;
use engine_core::{Engine, EngineError};

/// Where the configuration came from, to read it again the same way: its file, and the
/// secret variables taken from the environment at start-up (removed from it since).
pub(crate) struct ConfigSource {
    file: PathBuf,
    variables: Vec<(String, String)>,
    /// One reload at a time: a `SIGHUP` and a panel's edit do not interleave.
    reloading: Mutex<()>,
}

impl ConfigSource {
    pub(crate) fn new(file: PathBuf, variables: Vec<(String, String)>) -> Arc<Self> {
        Arc::new(Self {
            file,
            variables,
            reloading: Mutex::default(),
        })
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
        let source = self;
        while hangup.recv().await.is_some() {
            let (source, engine) = (Arc::clone(&source), Arc::clone(&engine));
            // Reading the file and building the agents (their plugins' states, project
            // roots) may block: off the async workers.
            let reloading = tokio::task::spawn_blocking(move || source.reload(&engine));
            if let Err(error) = reloading.await {
                tracing::error!("the configuration reload panicked: {error}");
            }
        }
    }

    fn reload(&self, engine: &Engine) {
        let _one = self.reloading.lock().expect("the reload's lock");
        let reloaded = EngineConfig::read(Some(&self.file), self.variables.clone())
            .map_err(EngineError::from)
            .and_then(|config| engine.reload(config));
        match reloaded {
            Ok(reloaded) => tracing::info!(
                file = %self.file.display(),
                added = ?reloaded.added,
                removed = ?reloaded.removed,
                kept = ?reloaded.kept,
                "SIGHUP: configuration reloaded"
            ),
            Err(error) => tracing::error!(
                file = %self.file.display(),
                "SIGHUP: the configuration was not reloaded, and the engine keeps the one it has: {error}"
            ),
        }
    }
}

/// The configuration file as the admin panel edits it (`engine serve`'s tools switches).
pub(crate) struct PanelConfig {
    pub(crate) source: Arc<ConfigSource>,
    pub(crate) engine: Arc<Engine>,
}

impl engine_server::ConfigFile for PanelConfig {
    fn text(&self) -> std::io::Result<String> {
        std::fs::read_to_string(&self.source.file)
    }

    fn apply(&self, text: &str) -> Result<(), String> {
        let source = &self.source;
        let _one = source.reloading.lock().expect("the reload's lock");
        let reloaded = EngineConfig::read_text(&source.file, text, source.variables.clone())
            .map_err(EngineError::from)
            .and_then(|config| self.engine.reload(config))
            .map_err(|error| {
                format!("the engine refused the change, and the file was not written: {error}")
            })?;
        if let Err(error) = replace(&source.file, text) {
            // The engine runs what the file does not say: back to what it says.
            let restored = EngineConfig::read(Some(&source.file), source.variables.clone())
                .map_err(EngineError::from)
                .and_then(|config| self.engine.reload(config));
            let restored = match restored {
                Ok(_) => "the engine is back on the file's configuration",
                Err(_) => "and the engine could not read the file back: it runs the change",
            };
            return Err(format!(
                "{} could not be written ({error}); {restored}",
                source.file.display()
            ));
        }
        tracing::info!(
            file = %source.file.display(),
            added = ?reloaded.added,
            removed = ?reloaded.removed,
            kept = ?reloaded.kept,
            "the admin panel changed the configuration file, and the engine reloaded it"
        );
        Ok(())
    }
}

/// Writes `text` over `file` at once (a file beside it, renamed over it, with its
/// permissions): a reader never sees half of it, and a crash leaves the old one.
fn replace(file: &Path, text: &str) -> std::io::Result<()> {
    let name = file
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let beside = file.with_file_name(format!(".{name}.panel-edit"));
    let permissions = std::fs::metadata(file)?.permissions();
    let written = (|| {
        let mut out = std::fs::File::create(&beside)?;
        out.write_all(text.as_bytes())?;
        out.set_permissions(permissions)?;
        out.sync_all()?;
        std::fs::rename(&beside, file)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&beside);
    }
    written
}
