//! `call`: one tool, once, with JSON arguments.

use std::process::ExitCode;
use std::time::Duration;

use engine_core::{Call, CallErrorKind, Engine, Turn};

pub(crate) fn call(
    engine: &Engine,
    turn: &Turn,
    tool: &str,
    arguments: &str,
    timeout: Duration,
) -> ExitCode {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime starts");
    let outcome = runtime.block_on(async {
        let deadline = tokio::time::Instant::now() + timeout;
        // In a conversation, with the state its tools kept there, keeping what this
        // call writes: a state tool can be tried call by call.
        engine
            .call_in_conversation(turn, Call::new(tool, arguments).deadline(deadline))
            .await
    });
    match outcome {
        Ok(output) => {
            println!("{output}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            println!("{}", error.to_json());
            if error.kind() == CallErrorKind::UnknownTool {
                explain_left_out(engine, turn, tool);
            }
            ExitCode::FAILURE
        }
    }
}

/// Says on stderr why the agent left out `tool` when it is linked: the caller (a person)
/// learns what to configure, where the model reads only `unknown_tool`.
pub(crate) fn explain_left_out(engine: &Engine, turn: &Turn, tool: &str) {
    let (Some(linked), Some(agent)) = (engine.tool(tool), engine.agent(turn.agent())) else {
        return;
    };
    if let Some(left) = agent
        .left_out()
        .iter()
        .find(|left| left.tool == linked.id())
    {
        eprintln!(
            "`{}` is linked, and the agent `{}` leaves it out: {}",
            left.tool,
            agent.name(),
            left.reasons.join("; ")
        );
    } else if linked.needs_conversation() {
        eprintln!(
            "`{}` works only in a conversation: give `--conversation` (and `--subscriber`)",
            linked.id()
        );
    }
}
