//! The hooks an engine linked, sorted into each event's pipeline.
//!
//! A turn meets the events in order: `conversation_start` (first turn only) and
//! `message_received` before the model, `response_generated` after each reply, and
//! `response_sent` once the reply is out. Within an event, hooks run one after the other
//! in position order; equal positions are ordered by hook id, then source location, so
//! the order never depends on the linker.

mod left_behind;
mod pipeline;
mod remote;
mod run;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use plugin_sdk::abort::Abort;
use plugin_sdk::engine::{HookDescriptor, PluginManifest, StateWrites};
use plugin_sdk::hook::Event;
use plugin_sdk::ToolContext;

use crate::config::HookChoice;
use crate::equip::LeftOut;

use left_behind::LeftBehind;

pub(crate) use pipeline::{PreModel, ResponsePass};
pub(crate) use remote::{Remote, RemoteHook};

/// What one run of a hook is given: the turn's context as its parameters declare it
/// (`None` for a hook that reads nothing of it: it gets the shared empty one, built for
/// no run), and its abort signal, which the run fires once the engine stops waiting.
pub(crate) struct HookRun {
    pub(crate) context: Option<ToolContext>,
    pub(crate) abort: Abort,
    /// For a dev session's hook, the frame that carries its call (its payload is added
    /// when it runs).
    pub(crate) frame: Option<plugin_dev_wire::CallFrame>,
}

/// Builds each hook's run in the turn the pipeline serves, over the state the hooks
/// before it in the pass wrote; `None`: the hook does not run in this turn (it reads a
/// conversation the turn does not have).
pub(crate) type HookRuns<'a> = &'a (dyn Fn(&Hook, &Written) -> Option<HookRun> + Sync);

/// The state the hooks of a pass wrote, by hook id, in the order they ran.
pub(crate) type Written = Vec<(String, StateWrites)>;

/// A linked hook with its id, worked out once at start-up, and where and how long it
/// runs: as declared, or as an agent sets it.
#[derive(Clone)]
pub struct Hook {
    descriptor: &'static HookDescriptor,
    plugin: &'static PluginManifest,
    id: String,
    position: u32,
    timeout: Duration,
    /// Shared by every agent's copy: a thread left behind is the hook's, whoever ran it.
    left_behind: Arc<LeftBehind>,
    /// A dev session's implementation, which runs instead of the linked entry.
    remote: Option<Arc<dyn RemoteHook>>,
}

impl Hook {
    pub(crate) fn new(descriptor: &'static HookDescriptor) -> Self {
        Self {
            descriptor,
            plugin: (descriptor.plugin)(),
            id: descriptor.id(),
            position: descriptor.position,
            timeout: descriptor.timeout,
            left_behind: Arc::default(),
            remote: None,
        }
    }

    /// A dev session's implementation, when one runs instead of the linked entry.
    pub(crate) fn remote(&self) -> Option<&Arc<dyn RemoteHook>> {
        self.remote.as_ref()
    }

    /// The same hook, at `choice`'s position and timeout where it sets them (checked
    /// against the declared bounds at start-up).
    fn chosen(&self, choice: &HookChoice) -> Self {
        Self {
            position: choice.position().unwrap_or(self.position),
            timeout: choice
                .timeout_ms()
                .map_or(self.timeout, Duration::from_millis),
            ..self.clone()
        }
    }

    /// Why the agent holding `secrets` cannot run it: each secret it declares that is not
    /// configured there.
    pub(crate) fn missing_secrets(&self, secrets: &BTreeMap<String, String>) -> Vec<String> {
        self.descriptor
            .secret_specs()
            .filter(|spec| !secrets.contains_key(spec.key))
            .map(|spec| format!("the secret `{}` is not configured", spec.key))
            .collect()
    }

    /// Its place among its event's hooks: lower runs first.
    pub fn position(&self) -> u32 {
        self.position
    }

    /// How long it may run.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// What `#[define_hook]` registered.
    pub fn descriptor(&self) -> &'static HookDescriptor {
        self.descriptor
    }

    /// The plugin that defines the hook.
    pub fn plugin(&self) -> &'static PluginManifest {
        self.plugin
    }

    /// The canonical id, `<namespace>:<name>`.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The event the hook runs at.
    pub fn event(&self) -> Event {
        self.descriptor.event()
    }

    /// How many threads of this plain-`fn` hook still run after their turns stopped
    /// waiting for them (at the timeout, or when the turn was dropped). While there is
    /// one, the hook is skipped; there are at most a few, since a few runs of such a
    /// hook are under way at once at most.
    pub fn threads_left_behind(&self) -> usize {
        self.left_behind.threads()
    }

    /// How many runs of this plain-`fn` hook were skipped, because a thread of it was
    /// left behind or because as many runs as it may have at once were under way past
    /// its timeout; each is logged with this count, and counts as the hook's failure.
    pub fn skipped_runs(&self) -> u64 {
        self.left_behind.skipped()
    }

    /// The reply when the hook fails, for a reader of `locale`; `None` when its failure
    /// counts as observe.
    fn fail_closed(&self, locale: Option<&str>) -> Option<String> {
        let text = self.descriptor.fail_closed?;
        Some(text.resolve(locale.unwrap_or_default()).to_owned())
    }
}

/// Hooks by event, each event's hooks in the order they run: every linked hook, or the
/// ones an agent chose.
#[derive(Clone)]
pub(crate) struct Hooks {
    /// Indexed by `Event as usize`, in `Event::ALL` order.
    by_event: [Vec<Hook>; 4],
}

impl Hooks {
    /// Sorts `hooks` into their events' pipelines.
    pub(crate) fn new(hooks: Vec<Hook>) -> Self {
        let mut by_event: [Vec<Hook>; 4] = Default::default();
        for hook in hooks {
            by_event[hook.event() as usize].push(hook);
        }
        for hooks in &mut by_event {
            hooks.sort_by(|a, b| {
                let (at_a, at_b) = (a.descriptor.location, b.descriptor.location);
                (a.position, &a.id, at_a.file, at_a.line)
                    .cmp(&(b.position, &b.id, at_b.file, at_b.line))
            });
        }
        Self { by_event }
    }

    /// The hooks an agent runs: every one when it chooses none, else those `chosen`
    /// names (start-up refused any other), at the agent's positions and timeouts.
    ///
    /// A hook that declares a secret the agent does not configure is left out, as a tool
    /// is: it could only fail, and with `fail_closed`, halt every turn.
    pub(crate) fn for_agent(
        &self,
        chosen: Option<&[HookChoice]>,
        secrets: &BTreeMap<String, String>,
    ) -> (Self, Vec<LeftOut>) {
        let mut left_out = Vec::new();
        let mut hooks = Vec::new();
        for hook in self.all() {
            let choice = match chosen {
                None => None,
                Some(chosen) => match chosen.iter().find(|choice| choice.id() == hook.id()) {
                    Some(choice) => Some(choice),
                    None => continue,
                },
            };
            let reasons = hook.missing_secrets(secrets);
            if !reasons.is_empty() {
                left_out.push(LeftOut {
                    tool: hook.id().to_owned(),
                    reasons,
                });
                continue;
            }
            hooks.push(choice.map_or_else(|| hook.clone(), |choice| hook.chosen(choice)));
        }
        (Self::new(hooks), left_out)
    }

    /// These hooks with the dev sessions' `remote` ones: an override replaces the
    /// implementation of the hook of its id (which keeps its event, position and
    /// timeout); a bound hook joins its event at its position.
    pub(crate) fn with_remote(&self, remote: Vec<(Remote, Arc<dyn RemoteHook>)>) -> Self {
        let mut hooks: Vec<Hook> = self.all().cloned().collect();
        for (binding, implementation) in remote {
            match binding {
                Remote::Overrides(id) => {
                    if let Some(hook) = hooks.iter_mut().find(|hook| hook.id == id) {
                        *hook = hook.overridden(implementation);
                    }
                }
                Remote::Bound {
                    event,
                    name,
                    position,
                    timeout,
                } => hooks.push(Hook::bound(event, name, position, timeout, implementation)),
            }
        }
        Self::new(hooks)
    }

    /// Every hook, by event in turn order.
    pub(crate) fn all(&self) -> impl Iterator<Item = &Hook> {
        self.by_event.iter().flatten()
    }

    /// The hooks of `event`, in the order they run.
    pub(crate) fn of(&self, event: Event) -> &[Hook] {
        &self.by_event[event as usize]
    }

    /// Whether a hook may replace or regenerate replies, or withhold them (a
    /// `response_generated` hook that fails closed replaces the reply with its text): the
    /// engine then serves turns non-streamed, so that nothing reaches the user first.
    pub(crate) fn mutate_responses(&self) -> bool {
        self.of(Event::ResponseGenerated)
            .iter()
            .any(|hook| hook.descriptor.mutates_response || hook.descriptor.fail_closed.is_some())
    }
}
