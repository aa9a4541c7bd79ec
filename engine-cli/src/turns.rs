//! `engine turn` (one turn, its events as NDJSON on stdout) and `engine chat` (a
//! conversation in the terminal).

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use engine_core::{Engine, Stop, Turn, TurnControl, TurnEvent};
use serde_json::value::RawValue;

/// Runs one turn of `turn` for `message` (`None` resumes) and prints each event as a line.
pub(crate) fn one_turn(engine: &Arc<Engine>, turn: Turn, message: Option<String>) -> ExitCode {
    let runtime = runtime();
    let control = TurnControl::default();
    let cancel = control.cancel.clone();
    let summary = runtime.block_on(async {
        let interrupted = tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                cancel.cancel();
            }
        });
        let mut seq = 0;
        let mut print = |event: TurnEvent| {
            seq += 1;
            // A closed stdout (a pipe to `head`) loses the rest of the lines, not the turn.
            let mut stdout = std::io::stdout().lock();
            let _ = stdout.write_all(event.ndjson_line(seq).as_bytes());
            let _ = stdout.flush();
        };
        let summary = engine
            .converse(&turn, message.as_deref(), &control, &mut print)
            .await;
        interrupted.abort();
        summary
    });
    exit_code(&summary.stop, &summary.reply)
}

/// A conversation with `turn`'s agent in the terminal: each line typed is a message; the
/// reply streams, and each tool call shows as it starts and ends, with its arguments
/// (whole with `full_arguments`).
pub(crate) fn chat(engine: &Arc<Engine>, turn: Turn, full_arguments: bool) -> ExitCode {
    let runtime = runtime();
    let stdin = std::io::stdin();
    let interactive = stdin.is_terminal();
    let mut lines = stdin.lock().lines();
    loop {
        if interactive {
            print!("\n> ");
            let _ = std::io::stdout().flush();
        }
        let Some(Ok(line)) = lines.next() else {
            return ExitCode::SUCCESS;
        };
        let message = line.trim();
        if message.is_empty() {
            continue;
        }
        if matches!(message, "/quit" | "/exit") {
            return ExitCode::SUCCESS;
        }
        let control = TurnControl::default();
        runtime.block_on(chat_turn(engine, &turn, message, &control, full_arguments));
    }
}

async fn chat_turn(
    engine: &Engine,
    turn: &Turn,
    message: &str,
    control: &TurnControl,
    full_arguments: bool,
) {
    let cancel = control.cancel.clone();
    let interrupted = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            cancel.cancel();
        }
    });
    // Each running call: its id, and its tool with its arguments on one line.
    let running = Arc::new(std::sync::Mutex::new(Vec::<(String, String)>::new()));
    let spinner = tokio::spawn(spin(Arc::clone(&running)));
    let mut show = |event: TurnEvent| {
        let mut out = std::io::stdout().lock();
        match event {
            TurnEvent::Chat { text } => {
                let _ = write!(out, "{}", reply(&text));
            }
            TurnEvent::ToolCall {
                id,
                tool,
                arguments,
                ..
            } => {
                let activity = format!("{} {}", printable(&tool), collapsed(&arguments));
                let _ = writeln!(out, "\n  ⋯ {activity}");
                if full_arguments {
                    for line in whole(&arguments).lines() {
                        let _ = writeln!(out, "      {line}");
                    }
                }
                running.lock().expect("not poisoned").push((id, activity));
            }
            TurnEvent::ToolResult {
                id,
                status,
                duration_ms,
                error,
                ..
            } => {
                let mut running = running.lock().expect("not poisoned");
                let activity = running
                    .iter()
                    .position(|(known, _)| *known == id)
                    .map(|at| running.remove(at).1)
                    .unwrap_or_default();
                let mark = if status == engine_core::conversation::ToolStatus::Ok {
                    "✓"
                } else {
                    "✗"
                };
                let why = error
                    .map(|error| format!(": {}", printable(&error)))
                    .unwrap_or_default();
                let _ = writeln!(
                    out,
                    "\r  {mark} {activity} {} in {duration_ms} ms{why}",
                    status.as_str()
                );
            }
            TurnEvent::ActionStaged { action, .. } => {
                let _ = writeln!(out, "\r  … {action} staged: performed after the reply");
            }
            TurnEvent::ActionPerformed {
                action,
                duration_ms,
                ..
            } => {
                let _ = writeln!(out, "\n  ✓ {action} performed in {duration_ms} ms");
            }
            TurnEvent::ActionFailed {
                action,
                outcome,
                error,
                ..
            } => {
                let error = printable(&error);
                let _ = writeln!(out, "\n  ✗ {action} {outcome}: {error} (not retried)");
            }
            TurnEvent::ActionDropped { action, reason, .. } => {
                let _ = writeln!(out, "\n  – {action} dropped: {}", printable(&reason));
            }
            TurnEvent::Error { message } => {
                let _ = writeln!(out, "\n[error] {}", printable(&message));
            }
            TurnEvent::Done {
                stop,
                usage,
                cost_usd,
                ..
            } => {
                if stop != Stop::Answered {
                    let _ = writeln!(
                        out,
                        "\n[turn ended: {}]",
                        printable(&serde_json::to_string(&stop).unwrap_or_default())
                    );
                }
                let _ = writeln!(
                    out,
                    "\n[{} tokens in, {} out, ${cost_usd:.4}]",
                    usage.input_tokens, usage.output_tokens
                );
            }
            _ => {} // events added later
        }
        let _ = out.flush();
    };
    engine
        .converse(turn, Some(message), control, &mut show)
        .await;
    spinner.abort();
    interrupted.abort();
}

/// The most characters of a call's arguments an activity line shows.
const COLLAPSED_CHARS: usize = 80;

/// A call's arguments on one line: compact JSON (the model's text as a JSON string when
/// it is not JSON), cut at [`COLLAPSED_CHARS`] with `…`.
fn collapsed(arguments: &RawValue) -> String {
    let compact = compact(arguments);
    match compact.char_indices().nth(COLLAPSED_CHARS) {
        Some((end, _)) => format!("{}…", &compact[..end]),
        None => compact,
    }
}

/// A call's arguments whole, indented JSON, each line printable.
fn whole(arguments: &RawValue) -> String {
    let text = match serde_json::from_str::<serde_json::Value>(arguments.get()) {
        Ok(value) => serde_json::to_string_pretty(&value).unwrap_or_default(),
        Err(_) => arguments.get().to_owned(),
    };
    text.lines().map(printable).collect::<Vec<_>>().join("\n")
}

/// Compact JSON of `arguments`; their text as it is when they nest too deep to parse.
fn compact(arguments: &RawValue) -> String {
    match serde_json::from_str::<serde_json::Value>(arguments.get()) {
        Ok(value) => printable(&value.to_string()),
        Err(_) => printable(arguments.get()),
    }
}

/// The reply's text as a terminal shows it: its line breaks and tabs kept, every other
/// control character escaped (an escape sequence the model was led to write, to set the
/// clipboard or clear the screen, is shown, not obeyed).
fn reply(text: &str) -> String {
    text.split('\n')
        .map(|line| {
            line.split('\t')
                .map(printable)
                .collect::<Vec<_>>()
                .join("\t")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `text` with every control character escaped (`\u{1b}`): the model writes tool names
/// and arguments, and an escape sequence in them must not reach the terminal as one.
/// (JSON escapes the C0 controls inside strings; this catches the C1 controls, and text
/// that is not JSON.)
fn printable(text: &str) -> String {
    if !text.chars().any(char::is_control) {
        return text.to_owned();
    }
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Redraws a spinner after the calls still running (their activity lines), while any is.
async fn spin(running: Arc<std::sync::Mutex<Vec<(String, String)>>>) {
    const FRAMES: [char; 4] = ['|', '/', '-', '\\'];
    if !std::io::stdout().is_terminal() {
        return;
    }
    for frame in FRAMES.iter().cycle() {
        tokio::time::sleep(Duration::from_millis(120)).await;
        let running = running.lock().expect("not poisoned");
        if let Some((_, activity)) = running.last() {
            let mut out = std::io::stdout().lock();
            let _ = write!(out, "\r  {frame} {activity} ({} running)", running.len());
            let _ = out.flush();
        }
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime starts")
}

/// 0 when the model answered (even at a limit); 1 when the turn failed, or a limit left
/// it no reply (a spend cap with no room for a request); 130 cancelled.
fn exit_code(stop: &Stop, reply: &str) -> ExitCode {
    match stop {
        Stop::Limit { .. } if reply.is_empty() => ExitCode::FAILURE,
        Stop::Answered
        | Stop::Limit { .. }
        | Stop::Halted { .. }
        | Stop::Replaced { .. }
        | Stop::FailedClosed { .. } => ExitCode::SUCCESS,
        Stop::Cancelled => ExitCode::from(130),
        // The deadline, a provider's failure, the engine's; and any stop added later.
        _ => ExitCode::FAILURE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(json: &str) -> Box<RawValue> {
        RawValue::from_string(json.to_owned()).unwrap()
    }

    #[test]
    fn arguments_are_one_compact_line_cut_at_80_characters() {
        assert_eq!(
            collapsed(&raw("{\n  \"city\": \"Rome\",\n  \"days\": 1\n}")),
            r#"{"city":"Rome","days":1}"#
        );
        let long = collapsed(&raw(&format!(r#"{{"text":"{}"}}"#, "é".repeat(200))));
        assert_eq!(long.chars().count(), COLLAPSED_CHARS + 1);
        assert!(long.ends_with('…'), "{long}");
        assert_eq!(
            whole(&raw(r#"{"city":"Rome"}"#)),
            "{\n  \"city\": \"Rome\"\n}"
        );
    }

    #[test]
    fn a_replys_line_breaks_stay_and_its_escape_sequences_are_shown() {
        assert_eq!(
            reply("a\n\tb\u{1b}]52;c;Zm9v\u{7}"),
            "a\n\tb\\u{1b}]52;c;Zm9v\\u{7}"
        );
    }

    #[test]
    fn control_characters_from_the_model_never_reach_the_terminal() {
        // JSON keeps ESC escaped; a C1 control (CSI, U+009B) it would print raw.
        let shown = collapsed(&raw("{\"city\":\"\\u001b[2J\u{9b}2J\"}"));
        assert!(!shown.chars().any(char::is_control), "{shown:?}");
        assert!(shown.contains("\\u{9b}"), "{shown}");
        assert_eq!(printable("tool\u{1b}[31m"), "tool\\u{1b}[31m");
        // Arguments the model wrote as plain text reach the event as a JSON string.
        assert_eq!(collapsed(&raw("\"a\\nb\"")), r#""a\nb""#);
    }
}
