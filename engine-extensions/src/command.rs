//! Command tools: a program given the arguments as JSON on stdin, whose stdout is the
//! result, run in a process group of its own so that stopping it stops everything it
//! started.

use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use engine_core::external::{RunError, Runner};
use futures::future::BoxFuture;
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWriteExt as _};

use crate::arguments::Arguments;

/// The variables a command (or a stdio MCP server) gets from the engine's environment;
/// no other (the engine's own settings and anything a plugin's library put there stay
/// out).
const PASSED_VARIABLES: &[&str] = &["PATH", "HOME", "LANG", "LC_ALL", "TZ", "TMPDIR"];

/// How long stderr is read after the command exits, for what it left holding it.
const STDERR_GRACE: Duration = Duration::from_millis(500);

/// [`PASSED_VARIABLES`] as the engine has them.
pub(crate) fn passed_environment() -> impl Iterator<Item = (&'static str, std::ffi::OsString)> {
    PASSED_VARIABLES
        .iter()
        .filter_map(|name| Some((*name, std::env::var_os(name)?)))
}

/// How much of stderr is kept for the error: its end, where the reason usually is.
const STDERR_TAIL_BYTES: usize = 4096;
/// The lines of that end the error quotes.
const STDERR_LINES: usize = 5;

/// Runs one command tool.
pub struct CommandRunner(Arc<Command>);

struct Command {
    /// The tool's id, for messages.
    id: String,
    program: PathBuf,
    args: Vec<String>,
    /// The manifest's directory: where it runs, and what a relative program is in.
    dir: PathBuf,
    timeout: Duration,
    max_output: usize,
    arguments: Arguments,
}

impl CommandRunner {
    /// A runner of `command` (program first) from the manifest in `dir`, checking
    /// arguments with `arguments` and stopping it after `timeout` or `max_output` bytes.
    pub fn new(
        id: String,
        command: &[String],
        dir: &Path,
        timeout: Duration,
        max_output: usize,
        arguments: Arguments,
    ) -> Self {
        Self(Arc::new(Command {
            id,
            program: program_path(&command[0], dir),
            args: command[1..].to_vec(),
            dir: dir.to_owned(),
            timeout,
            max_output,
            arguments,
        }))
    }
}

/// The variable that holds the call's conversation id, for a command whose file asked
/// for it (`"context": ["conversation"]`) and a call in a conversation.
pub const CONVERSATION_VARIABLE: &str = "ENGINE_CONVERSATION_ID";

impl Runner for CommandRunner {
    fn run(
        &self,
        arguments: &str,
        conversation: Option<&str>,
    ) -> BoxFuture<'static, Result<String, RunError>> {
        let command = Arc::clone(&self.0);
        if let Err(error) = command.arguments.check(arguments) {
            return Box::pin(std::future::ready(Err(error)));
        }
        let input = arguments.to_owned();
        let conversation = conversation.map(str::to_owned);
        Box::pin(async move { command.run(input, conversation).await })
    }
}

impl Command {
    async fn run(&self, input: String, conversation: Option<String>) -> Result<String, RunError> {
        let mut child = tokio::process::Command::new(&self.program);
        child
            .args(&self.args)
            .current_dir(&self.dir)
            .env_clear()
            .envs(passed_environment());
        if let Some(conversation) = conversation {
            child.env(CONVERSATION_VARIABLE, conversation);
        }
        let mut child = child
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            // The model reads this: the error, not the host path of the program.
            .map_err(|error| {
                RunError::Failed(format!("`{}` could not be started: {error}", self.id))
            })?;
        // Dropped on every way out (finished, failed, timed out, or the call dropped):
        // whatever the command left running in its group goes with it.
        let _group = child.id().map(ProcessGroup);
        let mut stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let stderr = tokio::spawn(read_tail(child.stderr.take().expect("piped")));
        let write = tokio::spawn(async move {
            // A command that does not read its input closes the pipe: not an error.
            let _ = stdin.write_all(input.as_bytes()).await;
        });
        let work = async {
            // Past the cap, this returns at once, and the group is killed on the way out.
            let output = read_capped(stdout, self.max_output).await?;
            let status = child.wait().await.map_err(ReadError::Io)?;
            Ok::<_, ReadError>((output, status))
        };
        let finished = tokio::time::timeout(self.timeout, work).await;
        write.abort();
        let Ok(finished) = finished else {
            stderr.abort();
            return Err(RunError::TimedOut(format!(
                "`{}` did not finish within its timeout of {} s and was stopped",
                self.id,
                self.timeout.as_secs_f64()
            )));
        };
        let (output, status) = match finished {
            Ok(finished) => finished,
            Err(error) => {
                stderr.abort();
                return Err(match error {
                    ReadError::TooLong => RunError::Output(format!(
                        "`{}` wrote more than {} bytes on stdout and was stopped",
                        self.id, self.max_output
                    )),
                    ReadError::Io(error) => RunError::Failed(format!("`{}`: {error}", self.id)),
                });
            }
        };
        // The leader is done; what it left holding stderr gets a moment, no more.
        let stderr = tokio::time::timeout(STDERR_GRACE, stderr)
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default();
        if !status.success() {
            return Err(RunError::Failed(format!(
                "`{}` {}{}",
                self.id,
                exit_text(status),
                last_lines(&stderr)
            )));
        }
        let text = String::from_utf8(output)
            .map_err(|_| RunError::Output(format!("`{}` wrote text that is not UTF-8", self.id)))?;
        let text = text.trim();
        if text.is_empty() {
            return Err(RunError::Output(format!(
                "`{}` wrote nothing on stdout; a command tool writes its result there as JSON",
                self.id
            )));
        }
        serde_json::from_str::<serde::de::IgnoredAny>(text).map_err(|error| {
            RunError::Output(format!(
                "`{}` wrote something that is not JSON on stdout: {error}",
                self.id
            ))
        })?;
        Ok(text.to_owned())
    }
}

/// Every file the `command` of a file in `dir` may run or read by name, whether it exists
/// yet or not: its program ([`program_path`]; a bare name, in each directory of `PATH`
/// it may be found in, relative ones taken from `dir`, where it runs) and what each
/// argument names as a path from `dir` ([`named_in`]: a script an interpreter runs, maybe
/// through a link; a word that names no file resolves beside the tool file, which is no
/// root). What the program reads otherwise (its own configuration, the files a script
/// imports, a path put together at run time) is not seen.
pub(crate) fn named_files(command: &[String], dir: &Path) -> Vec<PathBuf> {
    let Some((program, arguments)) = command.split_first() else {
        return Vec::new();
    };
    let mut files = Vec::new();
    let path = program_path(program, dir);
    if path.components().count() > 1 {
        files.push(path);
    } else if let Some(paths) = std::env::var_os("PATH") {
        files.extend(std::env::split_paths(&paths).map(|on_path| dir.join(on_path).join(&path)));
    }
    for argument in arguments {
        files.extend(named_in(argument).map(|named| dir.join(named)));
    }
    files
}

/// What an argument may name as a file: the argument, each of its words (split where a
/// shell line, a list or a call in quotes separates them: `sh -c "sh ../site/x"`,
/// `PYTHONPATH=a:../site/lib`, `-Mlib=a,../site`, `open('../site/x.py')`), and in each
/// word every path that starts within it (`-nf../site/x.sed`).
fn named_in(argument: &str) -> impl Iterator<Item = &str> {
    const SEPARATORS: &[char] = &[
        ' ', '\t', '\n', '\'', '"', '`', ':', ',', ';', '=', '(', ')', '[', ']', '{', '}', '<',
        '>', '|', '&', '$',
    ];
    let words = argument
        .split(SEPARATORS)
        .filter(|word| !word.is_empty())
        .flat_map(|word| {
            let within = word
                .char_indices()
                .filter(move |&(at, c)| {
                    at > 0
                        && (c == '/'
                            || word[at..].starts_with("./")
                            || word[at..].starts_with("../"))
                })
                .map(move |(at, _)| &word[at..]);
            std::iter::once(word).chain(within)
        });
    std::iter::once(argument)
        .filter(|argument| !argument.is_empty())
        .chain(words)
}

/// The program a file's `command` names: a bare name is looked up on `PATH`; a relative
/// path with a directory (`./tool.sh`, `bin/tool`) is in the file's directory `dir`.
pub(crate) fn program_path(program: &str, dir: &Path) -> PathBuf {
    let path = Path::new(program);
    if path.components().count() > 1 && path.is_relative() {
        dir.join(path)
    } else {
        path.to_owned()
    }
}

/// A command's process group, killed when dropped.
pub(crate) struct ProcessGroup(pub(crate) u32);

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        use nix::sys::signal::{killpg, Signal};
        use nix::unistd::Pid;
        // The group may be gone already (ESRCH): nothing left to stop.
        let _ = killpg(Pid::from_raw(self.0 as i32), Signal::SIGKILL);
    }
}

enum ReadError {
    TooLong,
    Io(std::io::Error),
}

/// Everything `from` gives, unless it gives more than `cap` bytes.
async fn read_capped(mut from: impl AsyncRead + Unpin, cap: usize) -> Result<Vec<u8>, ReadError> {
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        let read = from.read(&mut chunk).await.map_err(ReadError::Io)?;
        if read == 0 {
            return Ok(bytes);
        }
        if bytes.len() + read > cap {
            return Err(ReadError::TooLong);
        }
        bytes.extend_from_slice(&chunk[..read]);
    }
}

/// The last [`STDERR_TAIL_BYTES`] `from` gives, read to its end.
async fn read_tail(mut from: impl AsyncRead + Unpin) -> Vec<u8> {
    let mut tail = Vec::new();
    let mut chunk = [0u8; 8 * 1024];
    while let Ok(read) = from.read(&mut chunk).await {
        if read == 0 {
            break;
        }
        tail.extend_from_slice(&chunk[..read]);
        if tail.len() > STDERR_TAIL_BYTES {
            tail.drain(..tail.len() - STDERR_TAIL_BYTES);
        }
    }
    tail
}

fn exit_text(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt as _;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(signal)) => format!("was killed by signal {signal}"),
        (None, None) => "failed".to_owned(),
    }
}

/// The last lines of stderr, for the error: `: line; line`, or nothing.
fn last_lines(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect();
    let last = &lines[lines.len().saturating_sub(STDERR_LINES)..];
    if last.is_empty() {
        String::new()
    } else {
        format!("; its stderr ends: {}", last.join(" | "))
    }
}
