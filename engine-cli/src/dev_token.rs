//! `engine dev-token`: the tokens plugin authors open dev sessions with, issued and
//! revoked without starting the engine (a running `engine serve` reads them at each
//! session's start, and every few seconds while it is open).

use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use engine_core::config::EngineConfig;
use engine_server::DevTokens;

use crate::args::DevTokenCommand;

/// Runs `command` for `agent` over the tokens of `config`'s data directory.
pub(crate) fn run(config: &EngineConfig, agent: &str, command: DevTokenCommand) -> ExitCode {
    let tokens = DevTokens::in_dir(&config.data_dir());
    let done = match command {
        DevTokenCommand::Issue { ttl_minutes } => {
            if !config.agents.contains_key(agent) {
                eprintln!(
                    "there is no agent `{agent}` in the configuration: name one with --agent"
                );
                return ExitCode::from(2);
            }
            tokens
                .issue(agent, Duration::from_secs(ttl_minutes * 60))
                .map(|(token, record)| {
                    eprintln!(
                        "issued dev token {} for the agent `{agent}`, for {ttl_minutes} minutes; it is shown once, here:",
                        record.id
                    );
                    println!("{token}");
                })
        }
        DevTokenCommand::List => tokens.list().map(|records| {
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |since| since.as_secs());
            for record in records {
                let state = if record.revoked {
                    "revoked".to_owned()
                } else if now >= record.expires_at {
                    "expired".to_owned()
                } else {
                    format!(
                        "works for {} more minutes",
                        (record.expires_at - now).div_ceil(60)
                    )
                };
                println!("{}  {}  {state}", record.id, record.agent);
            }
        }),
        DevTokenCommand::Revoke { id } => match tokens.revoke(&id) {
            Ok(true) => {
                println!("revoked {id}");
                Ok(())
            }
            Ok(false) => {
                eprintln!("there is no dev token `{id}` (engine dev-token list shows them)");
                return ExitCode::FAILURE;
            }
            Err(error) => Err(error),
        },
    };
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!(
                "the dev tokens in {} could not be kept: {error}",
                tokens.path().display()
            );
            ExitCode::FAILURE
        }
    }
}
