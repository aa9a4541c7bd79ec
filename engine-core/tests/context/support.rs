//! What every section uses: engines over this target's tools, and calls through them.

use engine_core::config::EngineConfig;
use engine_core::{Call, CallError, CallErrorKind, Engine, Tool, Turn};
use plugin_sdk::engine::{CallInput, ToolDescriptor};
use plugin_sdk::{ToolContext, ToolError};
use serde_json::Value;

pub const KEY: &str = "crm-KEY-9f8e7d6c5b4a";

/// An engine over this target's tools only, configured by `config` (TOML), with the
/// stores the configuration implies.
pub fn engine(config: &str) -> Engine {
    let config = EngineConfig::parse(config).expect("the test configuration parses");
    Engine::builder()
        .backends(engine::default_backends())
        .config(config)
        .tools(ctx_tools())
        .build()
        .expect("the engine starts")
}

/// This target's tools, without the example plugins engine-core's other tests link.
fn ctx_tools() -> impl Iterator<Item = &'static ToolDescriptor> {
    plugin_sdk::engine::linked_tools().filter(|tool| (tool.plugin)().namespace == "ctx")
}

/// A turn of `agent` in `conversation`, for `subscriber`.
pub fn in_conversation(engine: &Engine, agent: &str, subscriber: &str, conversation: &str) -> Turn {
    engine
        .turn(agent)
        .unwrap()
        .in_conversation(subscriber, conversation)
}

/// The tool with canonical id `id`.
pub fn tool<'e>(engine: &'e Engine, id: &str) -> &'e Tool {
    engine
        .tools()
        .iter()
        .find(|tool| tool.id() == id)
        .unwrap_or_else(|| panic!("no tool `{id}`"))
}

pub async fn call(
    engine: &Engine,
    turn: &Turn,
    tool: &str,
    arguments: Value,
) -> Result<Value, CallError> {
    let arguments = arguments.to_string();
    let output = engine.call(turn, Call::new(tool, &arguments)).await?;
    Ok(serde_json::from_str(&output).expect("tools answer JSON"))
}

pub fn kind(result: Result<Value, CallError>) -> CallErrorKind {
    result.expect_err("the call fails").kind()
}

/// Calls the tool `id` by hand with a bare context, as outside any conversation: how
/// its extractors answer when the engine would not even offer it.
pub async fn call_bare(id: &str, arguments: Value) -> Result<String, ToolError> {
    let tool = plugin_sdk::engine::linked_tools()
        .find(|tool| tool.id() == id)
        .unwrap_or_else(|| panic!("no tool `{id}`"));
    let arguments = arguments.to_string();
    let context = ToolContext::new();
    tool.call(CallInput::new(&arguments, &context)).await
}

/// Everything logged on this thread while the guard of [`Captured::start`] lives.
#[derive(Clone, Default)]
pub struct Captured(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
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
