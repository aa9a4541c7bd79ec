//! The watch loop (seed 003's `updateTools`): a supervisor holds the session and runs the
//! dev binary as a child that serves over its standard input and output; on a source
//! change it rebuilds, starts the new build, and swaps the session's tools and hooks
//! (an `update` frame) without dropping the session. Calls under way finish in the child
//! that took them, which then stops.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use notify::Watcher;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;

use super::connection::{self, Ended};
use super::peer::{In, Incoming, Out};
use super::tools::Served;
use super::{DevError, DevEvent, DevOptions};
use crate::wire::{Outcome, ToAuthor, ToEngine};

/// Set on the child a supervisor runs: it then serves over its standard input and output.
const CHILD_ENV: &str = "PLUGIN_DEV_CHILD";

/// How long the watcher waits for a burst of changes (an editor's save) to settle.
const SETTLE: Duration = Duration::from_millis(300);

/// What the watch loop rebuilds, and on what changes.
#[derive(Clone, Debug)]
pub struct Watch {
    build: Vec<String>,
    dirs: Vec<PathBuf>,
}

impl Watch {
    /// Rebuilds the example `example` of the package `package` with cargo when a file
    /// under `manifest_dir`'s `src/` or `examples/` changes; [`this_example!`](crate::this_example)
    /// gives the dev binary's own.
    pub fn cargo(manifest_dir: &str, package: &str, example: &str) -> Self {
        let dir = Path::new(manifest_dir);
        Self {
            build: [
                "cargo",
                "build",
                "--quiet",
                "-p",
                package,
                "--example",
                example,
            ]
            .map(str::to_owned)
            .to_vec(),
            dirs: vec![dir.join("src"), dir.join("examples")],
        }
    }

    /// `default` if the process was started with `--watch`, with `--watch-dir DIR`
    /// (repeatable) instead of its directories and `--build "COMMAND ARGS"` instead of its
    /// build; `None` without `--watch`.
    pub fn from_args(default: Watch) -> Option<Self> {
        let mut args = std::env::args().skip(1);
        let mut watch = None::<Watch>;
        let mut dirs = Vec::new();
        let mut build = None;
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--watch" => watch = Some(default.clone()),
                "--watch-dir" => dirs.extend(args.next().map(PathBuf::from)),
                "--build" => build = args.next(),
                _ => {}
            }
        }
        let mut watch = watch?;
        if !dirs.is_empty() {
            watch.dirs = dirs;
        }
        if let Some(build) = build {
            watch.build = build.split_whitespace().map(str::to_owned).collect();
        }
        Some(watch)
    }
}

/// Whether this process is a supervisor's child.
pub(super) fn is_child() -> bool {
    std::env::var_os(CHILD_ENV).is_some()
}

/// Serves `served` to the supervisor over standard input and output, until it closes.
pub(super) async fn serve_as_child(
    options: &DevOptions,
    served: Arc<Served>,
) -> Result<(), DevError> {
    let mut out = Out::Pipe(tokio::io::stdout());
    out.send(connection::hello(&served))
        .await
        .map_err(DevError::Disconnected)?;
    let lines = BufReader::new(tokio::io::stdin()).lines();
    let (_, reason) = connection::frames(out, In::Pipe(lines), options, served).await;
    Err(DevError::Disconnected(reason))
}

/// One build of the dev binary, serving.
struct Build {
    child: Child,
    stdin: ChildStdin,
    /// The calls it took and has not ended.
    calls: usize,
}

/// Holds the session for `options`, serving through children rebuilt as `watch` says;
/// reconnects as [`serve`](super::serve) does.
pub(super) async fn supervise(options: &DevOptions, watch: &Watch) -> Result<(), DevError> {
    let endpoint = options.endpoint()?;
    let binary = std::env::current_exe().map_err(|error| DevError::Build(error.to_string()))?;
    let (changed, mut changes) = mpsc::unbounded_channel();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        if event.is_ok_and(|event| !event.kind.is_access()) {
            let _ = changed.send(());
        }
    })
    .map_err(|error| DevError::Build(error.to_string()))?;
    for dir in &watch.dirs {
        watcher
            .watch(dir, notify::RecursiveMode::Recursive)
            .map_err(|error| {
                DevError::Build(format!("{} cannot be watched: {error}", dir.display()))
            })?;
    }
    let mut delay = options.backoff.0;
    loop {
        let reason = match connection::connect(&endpoint, options).await {
            Err(Ended::Refused(why)) => return Err(DevError::Refused(why)),
            Err(Ended::NotOpened(why) | Ended::Opened(why)) => why,
            Ok(socket) => {
                let (welcomed, why) = relay(socket, options, watch, &binary, &mut changes).await;
                // Only a session the engine welcomed starts the backoff again: one it
                // closes at once (its cap, another protocol) is retried ever slower.
                if welcomed {
                    delay = options.backoff.0;
                }
                why
            }
        };
        if !options.reconnect {
            options.report(DevEvent::Disconnected {
                reason: reason.clone(),
                retry_in: None,
            });
            return Err(DevError::Disconnected(reason));
        }
        options.report(DevEvent::Disconnected {
            reason,
            retry_in: Some(delay),
        });
        tokio::time::sleep(delay).await;
        delay = (delay * 2).min(options.backoff.1);
    }
}

/// What a child said, by its build's number.
type FromChild = (u64, Option<String>);

/// Relays one session between the engine and the builds, until it ends: whether the
/// engine welcomed it, and why it ended.
async fn relay(
    socket: super::peer::Socket,
    options: &DevOptions,
    watch: &Watch,
    binary: &Path,
    changes: &mut mpsc::UnboundedReceiver<()>,
) -> (bool, String) {
    let mut welcomed = false;
    let why = relay_frames(socket, options, watch, binary, changes, &mut welcomed).await;
    (welcomed, why)
}

/// What [`relay`] does, noting in `welcomed` whether the engine welcomed the session.
async fn relay_frames(
    socket: super::peer::Socket,
    options: &DevOptions,
    watch: &Watch,
    binary: &Path,
    changes: &mut mpsc::UnboundedReceiver<()>,
    welcomed: &mut bool,
) -> String {
    use futures::StreamExt;
    let (sink, stream) = socket.split();
    let (mut engine_out, mut engine_in) = (Out::Socket(sink), In::Socket(stream));
    let (said, mut heard) = mpsc::unbounded_channel::<FromChild>();
    let mut builds: HashMap<u64, Build> = HashMap::new();
    // The build under way, in its task: its result comes back here.
    let (built_sender, mut built) = mpsc::channel::<Result<(Build, String), String>>(1);
    let mut building = false;
    // When the changes seen have settled, if a build is to start; and whether changes
    // came during the build under way.
    let mut settle_until = None;
    let mut again = false;
    let mut owner: HashMap<u64, u64> = HashMap::new();
    let mut current = 0;
    let hello = match start(binary, current, &said).await {
        Ok((build, hello)) => {
            builds.insert(current, build);
            hello
        }
        Err(why) => return why,
    };
    if let Err(why) = engine_out.send(hello).await {
        return why;
    }
    loop {
        tokio::select! {
            incoming = engine_in.next() => {
                let text = match incoming {
                    Incoming::Frame(text) => text,
                    Incoming::Ended(why) => return why,
                    Incoming::Unexpected(why) => {
                        engine_out.close(&why).await;
                        return why;
                    }
                };
                // The frame goes to the build it concerns: a call to the newest, the rest
                // to the build that took their call; a welcome to the newest.
                let to = match serde_json::from_str::<ToAuthor>(&text) {
                    Ok(ToAuthor::Call(frame)) => {
                        owner.insert(frame.call, current);
                        if let Some(build) = builds.get_mut(&current) {
                            build.calls += 1;
                        }
                        Some(current)
                    }
                    // A cancelled call ends no other way: its build owes it nothing more.
                    Ok(ToAuthor::Cancel { call }) => {
                        let to = owner.remove(&call);
                        if let Some(build) = to.and_then(|to| builds.get_mut(&to)) {
                            build.calls = build.calls.saturating_sub(1);
                        }
                        to
                    }
                    Ok(ToAuthor::Answer { call, .. }) => owner.get(&call).copied(),
                    Ok(ToAuthor::Welcome { .. }) => {
                        *welcomed = true;
                        Some(current)
                    }
                    Err(error) => {
                        let why = format!("an unknown frame ({error})");
                        engine_out.close(&why).await;
                        return why;
                    }
                };
                if let Some(build) = to.and_then(|to| builds.get_mut(&to)) {
                    let mut line = text.into_bytes();
                    line.push(b'\n');
                    let _ = build.stdin.write_all(&line).await;
                }
                retire_idle(&mut builds, current);
            }
            Some((number, line)) = heard.recv() => {
                let Some(text) = line else {
                    // A build's process ended: its calls end here, or they never would.
                    builds.remove(&number);
                    let orphans: Vec<u64> = owner
                        .iter()
                        .filter(|(_, build)| **build == number)
                        .map(|(call, _)| *call)
                        .collect();
                    for call in orphans {
                        owner.remove(&call);
                        // It may have run the call in part or whole: an action's perform
                        // cut off here is `unknown`, as a dropped session's.
                        let outcome = Outcome::Err {
                            kind: "disconnected".to_owned(),
                            message: "the dev binary serving the call exited before it ended, and whether it took effect is not known".to_owned(),
                        };
                        let done = serde_json::to_string(&ToEngine::Done { call, outcome })
                            .expect("a frame always serializes");
                        if let Err(why) = engine_out.send(done).await {
                            return why;
                        }
                    }
                    if number == current {
                        return "the dev binary exited".to_owned();
                    }
                    continue;
                };
                match serde_json::from_str::<ToEngine>(&text) {
                    // A call the engine cancelled meanwhile was counted off already.
                    Ok(ToEngine::Done { call, .. }) => {
                        if owner.remove(&call).is_some() {
                            if let Some(build) = builds.get_mut(&number) {
                                build.calls = build.calls.saturating_sub(1);
                            }
                        }
                    }
                    Ok(_) => {}
                    // Not a frame: the dev binary's own output on stdout (a `println!`),
                    // which would otherwise end the session; it goes where it would have.
                    Err(_) => {
                        eprintln!("{text}");
                        continue;
                    }
                }
                if let Err(why) = engine_out.send(text).await {
                    return why;
                }
                retire_idle(&mut builds, current);
            }
            Some(()) = changes.recv() => {
                // A burst of changes (an editor's save) settles before a build starts;
                // changes during a build start another once it ends.
                if building {
                    again = true;
                } else {
                    settle_until = Some(tokio::time::Instant::now() + SETTLE);
                }
            }
            () = sleep_until(settle_until), if settle_until.is_some() && !building => {
                settle_until = None;
                // Built in a task of its own: the session's frames go on meanwhile.
                building = true;
                let (watch, binary, said, built) = (watch.clone(), binary.to_owned(), said.clone(), built_sender.clone());
                let number = current + 1;
                tokio::spawn(async move {
                    let _ = built.send(build(&watch, &binary, number, &said).await).await;
                });
            }
            Some(built) = built.recv() => {
                building = false;
                match built {
                    Err(output) => options.report(DevEvent::Rebuilt { ok: false, output }),
                    Ok((build, hello)) => {
                        current += 1;
                        builds.insert(current, build);
                        options.report(DevEvent::Rebuilt { ok: true, output: String::new() });
                        let update = match serde_json::from_str::<ToEngine>(&hello) {
                            Ok(ToEngine::Hello { tools, hooks, .. }) => ToEngine::Update { tools, hooks },
                            _ => return "the new build did not say hello".to_owned(),
                        };
                        let update = serde_json::to_string(&update).expect("a frame always serializes");
                        if let Err(why) = engine_out.send(update).await {
                            return why;
                        }
                        retire_idle(&mut builds, current);
                    }
                }
                if std::mem::take(&mut again) {
                    settle_until = Some(tokio::time::Instant::now() + SETTLE);
                }
            }
        }
    }
}

/// A build: the build run, the new binary started; or what the build printed, or why it
/// did not start.
async fn build(
    watch: &Watch,
    binary: &Path,
    number: u64,
    said: &mpsc::UnboundedSender<FromChild>,
) -> Result<(Build, String), String> {
    rebuild(watch).await?;
    start(binary, number, said).await
}

/// Sleeps until `at`, or forever without one.
async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Starts build `number` of `binary` as a child: it and its hello frame.
async fn start(
    binary: &Path,
    number: u64,
    said: &mpsc::UnboundedSender<FromChild>,
) -> Result<(Build, String), String> {
    let mut child = Command::new(binary)
        .env(CHILD_ENV, "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|error| format!("the dev binary did not start: {error}"))?;
    let stdin = child.stdin.take().expect("piped");
    let mut lines = BufReader::new(child.stdout.take().expect("piped")).lines();
    let hello = match tokio::time::timeout(Duration::from_secs(10), lines.next_line()).await {
        Ok(Ok(Some(hello))) => hello,
        _ => return Err("the new build did not say hello".to_owned()),
    };
    let said = said.clone();
    tokio::spawn(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            if said.send((number, Some(line))).is_err() {
                return;
            }
        }
        let _ = said.send((number, None));
    });
    Ok((
        Build {
            child,
            stdin,
            calls: 0,
        },
        hello,
    ))
}

/// Stops the builds older than `current` that have no call left.
fn retire_idle(builds: &mut HashMap<u64, Build>, current: u64) {
    builds.retain(|&number, build| {
        let keep = number == current || build.calls > 0;
        if !keep {
            let _ = build.child.start_kill();
        }
        keep
    });
}

/// Runs the build: what it printed when it failed.
async fn rebuild(watch: &Watch) -> Result<(), String> {
    let Some((program, args)) = watch.build.split_first() else {
        return Ok(());
    };
    let output = Command::new(program)
        .args(args)
        .output()
        .await
        .map_err(|error| format!("`{program}` did not start: {error}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).into_owned())
    }
}
