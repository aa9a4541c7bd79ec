//! Reloading while the engine runs: on a change in the directory (watched by `notify`),
//! and on `SIGHUP`.

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
/// goes, and on `SIGHUP`, until the returned handle is dropped. Needs a Tokio runtime.
/// A directory that does not exist yet is picked up when it is created (its parent is
/// watched meanwhile).
pub fn watch(engine: Arc<Engine>, loader: Loader) -> Result<Watching, String> {
    let (changes, mut changed) = mpsc::unbounded_channel::<()>();
    loader.on_change(changes.clone());
    let to_task = changes.clone();
    // Absolute, as the paths of the events are once what is watched is: with a relative
    // `--config`, a relative directory would never equal the `./tools.d` its parent's
    // events name, and a directory made after start-up would never be seen.
    let dir = std::path::absolute(loader.dir())
        .map_err(|error| format!("cannot watch {}: {error}", loader.dir().display()))?;
    let events_dir = dir.clone();
    // Only what can change the set: a change (`changes_the_set`) to an extension file, or
    // to the directory itself (when its parent is watched). A command writing beside its
    // file, or a database beside the configuration, reloads nothing.
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let Ok(event) = event else { return };
        // A rescan is asked for when the kernel's queue overflowed: changes were lost.
        let about_the_set = event
            .paths
            .iter()
            .any(|path| *path == events_dir || crate::is_extension_file(path));
        let relevant = event.need_rescan() || (changes_the_set(&event.kind) && about_the_set);
        // Every event, relevant or not: what a reload (or its absence) followed from.
        tracing::debug!(kind = ?event.kind, paths = ?event.paths, relevant, "extensions watcher: event");
        if relevant {
            let _ = to_task.send(());
        }
    })
    .map_err(|error| format!("cannot watch {}: {error}", loader.dir().display()))?;
    let mut watched = watch_dir_or_parent(&mut watcher, &dir)?;
    let mut hangup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
        .map_err(|error| format!("cannot listen for SIGHUP: {error}"))?;
    let task = tokio::spawn(async move {
        loop {
            tokio::select! {
                Some(()) = changed.recv() => {
                    // Let the burst settle, then read it as one change.
                    tokio::time::sleep(SETTLE).await;
                    while changed.try_recv().is_ok() {}
                }
                Some(()) = hangup.recv() => tracing::info!("SIGHUP: reloading the extensions"),
                else => return,
            }
            // The directory appeared (its parent was watched), or went (its own watch
            // went with it, and its parent is watched until it is back).
            if watched != dir || !dir.is_dir() {
                if let Ok(now) = watch_dir_or_parent(&mut watcher, &dir) {
                    if now == dir {
                        let _ = watcher.unwatch(&watched);
                    }
                    watched = now;
                }
            }
            let installed = engine.install_extensions(loader.load(&engine).await);
            tracing::info!(
                dir = %loader.dir().display(),
                tools = installed.tools().len(),
                files = installed.files().len(),
                "extensions reloaded"
            );
        }
    });
    drop(changes);
    Ok(Watching { task })
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
