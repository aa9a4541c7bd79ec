//! `SIGHUP` while serving: the configuration file is read again and the engine's agents
//! and providers replaced with it (the extensions directory reloads on its own watch).

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;

use engine_core::config::EngineConfig;
use engine_core::{Engine, EngineError};

/// Where the configuration came from, to read it again the same way: its file, and the
/// secret variables taken from the environment at start-up (removed from it since).
pub(crate) struct ConfigSource {
    pub(crate) file: PathBuf,
    pub(crate) variables: Vec<(String, String)>,
}

impl ConfigSource {
    /// Listens for `SIGHUP` from now on (so that one sent while the server starts is not
    /// the default's end of the process), and gives the task that reloads `engine` on
    /// each, logging what changed or why nothing did. Needs a Tokio runtime.
    pub(crate) fn reload_on_hangup(self, engine: Arc<Engine>) -> Option<impl Future<Output = ()>> {
        use tokio::signal::unix::{signal, SignalKind};
        let mut hangup = signal(SignalKind::hangup())
            .inspect_err(|error| {
                tracing::error!("the configuration will not reload on SIGHUP: {error}");
            })
            .ok()?;
        Some(async move { self.reload_each(&mut hangup, engine).await })
    }

    async fn reload_each(self, hangup: &mut tokio::signal::unix::Signal, engine: Arc<Engine>) {
        let source = Arc::new(self);
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
