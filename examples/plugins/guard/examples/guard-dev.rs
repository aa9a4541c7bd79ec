//! The guard plugin in dev mode: its hooks run from this process in place of the ones the
//! engine links (same ids), for the agent ENGINE_DEV_AGENT of the engine at
//! ENGINE_DEV_URL, with the token ENGINE_DEV_TOKEN (`engine dev-token issue`).

// Linked for its hooks: naming the crate once is what keeps its registrations.
use guard as _;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let options = match plugin_dev::DevOptions::from_env() {
        Ok(options) => options.on_event(|event| eprintln!("dev: {event:?}")),
        Err(error) => {
            eprintln!("{error}");
            return std::process::ExitCode::from(2);
        }
    };
    match plugin_dev::serve(options).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{error}");
            std::process::ExitCode::FAILURE
        }
    }
}
