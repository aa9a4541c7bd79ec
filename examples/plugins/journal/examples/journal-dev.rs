//! The journal plugin in dev mode: serves its tools to a running engine's agent, with
//! the engine's real context, until stopped. Set ENGINE_DEV_URL (the engine's address),
//! ENGINE_DEV_AGENT and ENGINE_DEV_TOKEN (`engine dev-token issue --agent <agent>`).
//! With `--watch`, it rebuilds itself when the plugin's sources change and swaps what
//! the session serves without dropping it.

// Linked for its tools: naming the crate once is what keeps its registrations.
use journal as _;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    // The engine links no journal: its hook runs for the session only, at its position.
    // The crate prints nothing itself: say what happens, one line each.
    let options = match plugin_dev::DevOptions::from_env() {
        Ok(options) => options
            .bind("note_count")
            .on_event(|event| eprintln!("dev: {event:?}")),
        Err(error) => {
            eprintln!("{error}");
            return std::process::ExitCode::from(2);
        }
    };
    let options = match plugin_dev::Watch::from_args(plugin_dev::this_example!()) {
        Some(watch) => options.watch(watch),
        None => options,
    };
    match plugin_dev::serve(options).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{error}");
            std::process::ExitCode::FAILURE
        }
    }
}
