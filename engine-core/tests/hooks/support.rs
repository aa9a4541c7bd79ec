//! What every section uses: engines over the hooks a test names, and turns through them.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::future::ready;
use std::io::Write;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

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
        .backends(engine::default_backends())
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

/// The turn of most tests: the agent's, in `conversation-1`, in English.
pub fn turn(engine: &Engine) -> Turn {
    turn_in(engine, "conversation-1", "en-US")
}

/// A turn of the agent in `conversation`, for a reader of `locale`.
pub fn turn_in(engine: &Engine, conversation: &str, locale: &str) -> Turn {
    engine
        .turn(DEFAULT_AGENT)
        .expect("the configuration has the default agent")
        .in_conversation("subscriber-1", conversation)
        .with_locale(locale)
}

/// Runs a turn whose model answers with `replies` in order, the last one from then on;
/// answers the outcome and what the model was asked each time.
pub async fn run(
    engine: &Engine,
    message: &str,
    first: bool,
    replies: &[&str],
) -> (TurnOutcome, Vec<ModelInput>) {
    run_turn(engine, &turn(engine), message, first, replies).await
}

/// [`run`], in `turn`.
pub async fn run_turn(
    engine: &Engine,
    turn: &Turn,
    message: &str,
    first: bool,
    replies: &[&str],
) -> (TurnOutcome, Vec<ModelInput>) {
    let mut asked = Vec::new();
    let outcome = engine
        .run_turn(turn, message, first, |input: ModelInput| {
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

/// What hooks saw, by conversation. A test that reads a record runs its turns in a
/// conversation of its own (its name), so tests running at once never see each other's.
pub struct Record(Mutex<BTreeMap<String, Vec<String>>>);

impl Record {
    pub const fn new() -> Self {
        Self(Mutex::new(BTreeMap::new()))
    }

    /// Notes `seen` in `conversation`.
    pub fn push(&self, conversation: &str, seen: impl Into<String>) {
        let mut record = self.0.lock().unwrap();
        record
            .entry(conversation.to_owned())
            .or_default()
            .push(seen.into());
    }

    /// What was noted in `conversation`, in order.
    pub fn of(&self, conversation: &str) -> Vec<String> {
        let record = self.0.lock().unwrap();
        record.get(conversation).cloned().unwrap_or_default()
    }
}

/// A gate a plain-`fn` hook blocks on until its test opens it.
pub struct Gate {
    open: Mutex<bool>,
    opened: Condvar,
}

impl Gate {
    pub const fn new() -> Self {
        Self {
            open: Mutex::new(false),
            opened: Condvar::new(),
        }
    }

    /// Blocks until the gate is open.
    pub fn wait(&self) {
        let open = self.open.lock().unwrap();
        let _open = self.opened.wait_while(open, |open| !*open).unwrap();
    }

    pub fn is_open(&self) -> bool {
        *self.open.lock().unwrap()
    }

    pub fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.opened.notify_all();
    }

    /// Opens the gate when the test ends, passed or failed, and at the latest after
    /// `bound`: a hook the engine wrongly waits for then returns, and the test fails on
    /// what the hook answered instead of hanging.
    pub fn opened_by_the_end(&'static self, bound: Duration) -> OpenOnDrop {
        std::thread::spawn(move || {
            std::thread::sleep(bound);
            self.open();
        });
        OpenOnDrop(self)
    }
}

/// Opens its gate when dropped.
pub struct OpenOnDrop(&'static Gate);

impl Drop for OpenOnDrop {
    fn drop(&mut self) {
        self.0.open();
    }
}
