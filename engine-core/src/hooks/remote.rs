//! Hooks a dev session serves (dev mode): run in the author's process instead of a linked
//! entry, either in place of a hook the agent runs (an override keeps its event,
//! position and timeout) or bound at an event for the session only.

use std::sync::Arc;
use std::time::Duration;

use plugin_dev_wire::{CallFrame, NeedsDecl, Outcome, SecretDecl};
use plugin_sdk::engine::{
    BoxFuture, Catalogue, HookDescriptor, HookEntry, HookHandler, HookInput, HookResult, Needs,
    PluginManifest, SourceLocation, System,
};
use plugin_sdk::hook::{
    ConversationStart, Event, MessageReceived, ResponseGenerated, ResponseSent,
};
use plugin_sdk::ToolContext;

use super::Hook;

/// A session's implementation of a hook.
pub(crate) trait RemoteHook: Send + Sync {
    /// Runs the call `frame` describes in the author's process, answering its
    /// questions from `context`: its outcome, or why there is none.
    fn run(
        &self,
        frame: CallFrame,
        context: ToolContext,
    ) -> BoxFuture<'static, Result<Outcome, String>>;
    /// The id its process knows it by.
    fn process_id(&self) -> String;
    /// Its plugin's namespace, in the author's process.
    fn namespace(&self) -> &str;
    /// What of the context it reads.
    fn needs(&self) -> NeedsDecl;
    /// The secrets it declares.
    fn secrets(&self) -> &[SecretDecl];
}

/// Where a session's hook runs.
pub(crate) enum Remote {
    /// In place of the agent's hook of this id.
    Overrides(String),
    /// At `event` and `position`, as `name`, for up to `timeout`.
    Bound {
        event: Event,
        name: String,
        position: u32,
        timeout: Duration,
    },
}

static DEV: PluginManifest = PluginManifest {
    namespace: "dev",
    package: "plugin-dev",
    version: "0.0.0",
    engine: "*",
    display_name: None,
    description: None,
    api_version: None,
    state: None,
    system: System::NONE,
    catalogue: Catalogue::NONE,
    oauth: &[],
};

fn dev() -> &'static PluginManifest {
    &DEV
}

/// A bound hook's linked entry, never run: its session's implementation runs instead.
fn unlinked<E: plugin_sdk::engine::HookEvent>(_: HookInput<'_, E>) -> HookResult<E> {
    Err("a dev session's hook has no linked entry".to_owned())
}

macro_rules! bound_descriptor {
    ($name:ident, $event:ident, $mutates:expr) => {
        static $name: HookDescriptor = HookDescriptor {
            name: "bound",
            description: "A hook a dev session binds for itself.",
            summary: None,
            position: 0,
            timeout: Duration::from_secs(2),
            mutates_response: $mutates,
            fail_closed: None,
            plugin: dev,
            handler: HookHandler::$event(HookEntry::Ready(unlinked::<$event>)),
            needs: Needs::NOTHING,
            secrets: &[],
            location: SourceLocation {
                file: "dev session",
                line: 0,
            },
        };
    };
}

bound_descriptor!(CONVERSATION_START, ConversationStart, false);
bound_descriptor!(MESSAGE_RECEIVED, MessageReceived, false);
// A bound hook may change the reply only where the event allows it; declaring it here
// makes the agent's turns unstreamed while the session is open, as a linked one would.
bound_descriptor!(RESPONSE_GENERATED, ResponseGenerated, true);
bound_descriptor!(RESPONSE_SENT, ResponseSent, false);

impl Hook {
    /// The same hook, run by `remote` instead of its linked entry.
    pub(crate) fn overridden(&self, remote: Arc<dyn RemoteHook>) -> Self {
        Self {
            remote: Some(remote),
            ..self.clone()
        }
    }

    /// A hook a session binds at `event`, run by `remote`.
    pub(crate) fn bound(
        event: Event,
        name: String,
        position: u32,
        timeout: Duration,
        remote: Arc<dyn RemoteHook>,
    ) -> Self {
        let descriptor = match event {
            Event::ConversationStart => &CONVERSATION_START,
            Event::MessageReceived => &MESSAGE_RECEIVED,
            Event::ResponseGenerated => &RESPONSE_GENERATED,
            Event::ResponseSent => &RESPONSE_SENT,
        };
        Self {
            id: name,
            position,
            timeout,
            remote: Some(remote),
            ..Hook::new(descriptor)
        }
    }
}
