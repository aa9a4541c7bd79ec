//! What the turn benchmarks share: an OpenAI-compatible provider served in this process,
//! and the configuration of one agent that runs its turns against it.

use axum::Router;
use engine_core::config::{AgentConfig, EngineConfig, ProviderConfig, TurnConfig};
use engine_core::provider::Wire;

/// One server-sent event of a chat completion's stream: a `delta` (JSON) and its
/// `finish_reason` (JSON: `null` or a string).
pub fn chunk(delta: &str, finish: &str) -> String {
    format!(
        "data: {{\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":{finish}}}]}}\n\n"
    )
}

/// Serves `app` on a loopback port, on a thread and runtime of its own (so that the
/// engine's runtime is the engine's alone); answers its base URL (`http://.../v1`).
pub fn serve(app: Router) -> String {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("a port");
            sender
                .send(listener.local_addr().expect("an address"))
                .expect("sent");
            axum::serve(listener, app)
                .await
                .expect("the provider serves");
        });
    });
    format!(
        "http://{}/v1",
        receiver.recv().expect("the provider starts")
    )
}

/// A configuration with one agent, `bench`, whose turns ask the provider at `base_url`
/// (no retries: a benchmark's failure shows).
pub fn one_agent(base_url: &str) -> EngineConfig {
    let mut config = EngineConfig::default();
    let mut provider = ProviderConfig::new(Wire::Openai, base_url, "bench");
    provider.max_retries = 0;
    config.providers.insert("local".into(), provider);
    config.agents.insert(
        "bench".into(),
        AgentConfig {
            turn: Some(TurnConfig::new("local")),
            ..AgentConfig::default()
        },
    );
    config
}
