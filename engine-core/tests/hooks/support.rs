//! What every section uses: engines over the hooks a test names, and turns through them.

use std::convert::Infallible;
use std::future::ready;
use std::io::Write;
use std::sync::{Arc, Mutex};

use engine_core::config::{EngineConfig, DEFAULT_AGENT};
use engine_core::{Engine, EngineError, Limits, ModelInput, StartupError, Turn, TurnOutcome};
use plugin_sdk::engine::HookDescriptor;

/// An engine with exactly the hooks named, found among the linked ones.
pub fn engine(names: &[&str]) -> Engine {
    engine_with(names, Limits::default())
}

/// [`engine`], under `limits`.
pub fn engine_with(names: &[&str], limits: Limits) -> Engine {
    let hooks: Vec<_> = names
        .iter()
        .map(|name| {
            plugin_sdk::engine::linked_hooks()
                .find(|hook| hook.name == *name)
                .unwrap_or_else(|| panic!("no hook `{name}` is linked"))
        })
        .collect();
    build(hooks, limits).expect("the hooks pass validation")
}

/// An engine with exactly `hooks` and no tools, and its one agent; or why it refused.
pub fn build(hooks: Vec<&'static HookDescriptor>, limits: Limits) -> Result<Engine, StartupError> {
    let config = EngineConfig::load(None, []).expect("no file, no variables");
    match Engine::builder()
        .config(config)
        .limits(limits)
        .hooks(hooks)
        .build()
    {
        Ok(engine) => Ok(engine),
        Err(EngineError::Startup(error)) => Err(error),
        Err(other) => panic!("the engine did not start: {other}"),
    }
}

/// The turn of every test: the agent's, in `conversation-1`, in English.
pub fn turn(engine: &Engine) -> Turn {
    engine
        .turn(DEFAULT_AGENT)
        .expect("the configuration has the default agent")
        .in_conversation("subscriber-1", "conversation-1")
        .with_locale("en-US")
}

/// Runs a turn whose model answers with `replies` in order, the last one from then on;
/// answers the outcome and what the model was asked each time.
pub async fn run(
    engine: &Engine,
    message: &str,
    first: bool,
    replies: &[&str],
) -> (TurnOutcome, Vec<ModelInput>) {
    let mut asked = Vec::new();
    let outcome = engine
        .run_turn(&turn(engine), message, first, |input: ModelInput| {
            let reply = replies[asked.len().min(replies.len() - 1)].to_owned();
            asked.push(input);
            ready(Ok::<_, Infallible>(reply))
        })
        .await
        .unwrap();
    (outcome, asked)
}

/// Everything logged while `body` runs on this thread, as text.
#[derive(Clone, Default)]
pub struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    pub fn start(&self) -> tracing::subscriber::DefaultGuard {
        let writer = self.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish();
        tracing::subscriber::set_default(subscriber)
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}
