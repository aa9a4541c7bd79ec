//! Reloading while the engine runs: on a change in the tools' or the providers'
//! directory (each watched by `notify`), and on `SIGHUP`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use engine_core::Engine;
use notify::{RecursiveMode, Watcher as _};
use tokio::sync::mpsc;

use crate::Loader;

/// How long the watcher waits after a change for the next one: an editor's save is
/// several events (write a temporary file, rename it), read as one.
const SETTLE: Duration = Duration::from_millis(150);

/// The watch started by [`watch`]; dropping it stops it.
pub struct Watching {
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Watching {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Reloads `loader`'s directory into `engine` whenever a file in it changes, appears or
/// goes, and on `SIGHUP`, until the returned handle is dropped; the same for its
/// providers directory, whose files go to
/// [`Engine::install_providers`](engine_core::Engine::install_providers). Needs a Tokio
/// runtime. A directory that does not exist yet is picked up when it is created (its
/// parent is watched meanwhile).
pub fn watch(engine: Arc<Engine>, loader: Loader) -> Result<Watching, String> {
    let (changes, mut changed) = mpsc::unbounded_channel::<Which>();
    let (tools_changed, reload_tools) = mpsc::unbounded_channel::<()>();
    loader.on_change(tools_changed);
    let mut tools = Watched::start(loader.dir(), Which::Tools, changes.clone())?;
    // A providers directory that cannot be watched leaves the tools watched: said, and
    // read again on SIGHUP still.
    let mut providers = loader.providers_dir().and_then(|dir| {
        Watched::start(dir, Which::Providers, changes.clone())
            .inspect_err(|error| {
                tracing::error!("drop-in providers will reload on SIGHUP only: {error}")
            })
            .ok()
    });
    let providers_dir = loader.providers_dir().map(Path::to_owned);
    // Read once now: a file changed between start-up's read and this watch is not lost.
    let _ = changes.send(Which::Providers);
    let mut hangup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
        .map_err(|error| format!("cannot listen for SIGHUP: {error}"))?;
    // A server's tools or state changed: the tools are read again.
    let servers = {
        let changes = changes.clone();
        let mut reload_tools = reload_tools;
        tokio::spawn(async move {
            while reload_tools.recv().await.is_some() {
                if changes.send(Which::Tools).is_err() {
                    return;
                }
            }
        })
    };
    let task = tokio::spawn(async move {
        let _servers = AbortOnDrop(servers);
        loop {
            let (mut read_tools, mut read_providers) = (false, false);
            let mut mark = |which: Which| match which {
                Which::Tools => read_tools = true,
                Which::Providers => read_providers = true,
            };
            tokio::select! {
                Some(which) = changed.recv() => {
                    mark(which);
                    // Let the burst settle, then read it as one change.
                    tokio::time::sleep(SETTLE).await;
                    while let Ok(which) = changed.try_recv() {
                        mark(which);
                    }
                }
                Some(()) = hangup.recv() => {
                    tracing::info!("SIGHUP: reloading the extensions and the providers");
                    mark(Which::Tools);
                    mark(Which::Providers);
                }
                else => return,
            }
            if let (true, Some(dir)) = (read_providers, &providers_dir) {
                if let Some(providers) = &mut providers {
                    providers.follow();
                }
                let files = engine.install_providers(crate::providers::read_dir(dir));
                tracing::info!(
                    dir = %dir.display(),
                    files = files.len(),
                    usable = files.iter().filter(|file| file.state != "error").count(),
                    "providers reloaded"
                );
            }
            if read_tools {
                tools.follow();
                let installed = engine.install_extensions(loader.load(&engine).await);
                tracing::info!(
                    dir = %loader.dir().display(),
                    tools = installed.tools().len(),
                    files = installed.files().len(),
                    "extensions reloaded"
                );
            }
        }
    });
    drop(changes);
    Ok(Watching { task })
}

/// Which directory changed.
#[derive(Clone, Copy)]
enum Which {
    Tools,
    Providers,
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// One directory watched, or its parent while it does not exist.
struct Watched {
    /// The directory, absolute.
    dir: PathBuf,
    /// What is watched now: the directory, or its parent.
    watched: PathBuf,
    watcher: notify::RecommendedWatcher,
}

impl Watched {
    /// Watches `dir`, telling `changes` of `which` on each change of its files.
    fn start(
        dir: &Path,
        which: Which,
        changes: mpsc::UnboundedSender<Which>,
    ) -> Result<Self, String> {
        // Absolute, as the paths of the events are once what is watched is: with a
        // relative `--config`, a relative directory would never equal the `./tools.d` its
        // parent's events name, and a directory made after start-up would never be seen.
        let dir = std::path::absolute(dir)
            .map_err(|error| format!("cannot watch {}: {error}", dir.display()))?;
        let events_dir = dir.clone();
        // Only what can change the set: a change (`changes_the_set`) to a `*.json` file
        // of the directory, or to the directory itself (when its parent is watched). A
        // command writing beside its file, or a database beside the configuration,
        // reloads nothing.
        let mut watcher =
            notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                let Ok(event) = event else { return };
                let about_the_set = event.paths.iter().any(|path| {
                    *path == events_dir
                        || (path.parent() == Some(&*events_dir) && crate::is_extension_file(path))
                });
                // A rescan is asked for when the kernel's queue overflowed: changes were lost.
                let relevant =
                    event.need_rescan() || (changes_the_set(&event.kind) && about_the_set);
                // Every event, relevant or not: what a reload (or its absence) followed from.
                tracing::debug!(kind = ?event.kind, paths = ?event.paths, relevant, "extensions watcher: event");
                if relevant {
                    let _ = changes.send(which);
                }
            })
            .map_err(|error| format!("cannot watch {}: {error}", dir.display()))?;
        let watched = watch_dir_or_parent(&mut watcher, &dir)?;
        Ok(Self {
            dir,
            watched,
            watcher,
        })
    }

    /// Follows the directory: it appeared (its parent was watched), or went (its own
    /// watch went with it, and its parent is watched until it is back).
    fn follow(&mut self) {
        if self.watched != self.dir || !self.dir.is_dir() {
            if let Ok(now) = watch_dir_or_parent(&mut self.watcher, &self.dir) {
                if now == self.dir {
                    let _ = self.watcher.unwatch(&self.watched);
                }
                self.watched = now;
            }
        }
    }
}

/// Whether an event of `kind` can change the set of extensions: a file made, written,
/// renamed or removed. Not an access: each reload opens and reads every file, and
/// hearing those opens as changes would reload for ever. Not metadata either (an
/// access time, a mode), which a manifest's meaning does not depend on.
fn changes_the_set(kind: &notify::EventKind) -> bool {
    use notify::event::ModifyKind;
    use notify::EventKind;
    matches!(
        kind,
        EventKind::Create(_)
            | EventKind::Remove(_)
            | EventKind::Modify(ModifyKind::Data(_) | ModifyKind::Name(_) | ModifyKind::Any)
    )
}

/// Watches `dir`, or its parent while it does not exist; gives which it watches.
fn watch_dir_or_parent(
    watcher: &mut notify::RecommendedWatcher,
    dir: &Path,
) -> Result<PathBuf, String> {
    let target = if dir.is_dir() {
        dir.to_owned()
    } else {
        match dir.parent() {
            Some(parent) => parent.to_owned(),
            None => return Err(format!("{} has no parent to watch", dir.display())),
        }
    };
    watcher
        .watch(&target, RecursiveMode::NonRecursive)
        .map_err(|error| format!("cannot watch {}: {error}", target.display()))?;
    Ok(target)
}
