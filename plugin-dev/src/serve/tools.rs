//! What the author's process serves: the tools and hooks it links, declared to the
//! engine, and one call of one of them with the context the engine sent.

use std::any::Any;
use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::FutureExt;
use plugin_sdk::abort::Abort;
use plugin_sdk::artifacts::Artifacts;
use plugin_sdk::audit::Audit;
use plugin_sdk::engine::{
    linked_hooks, linked_tools, CallInput, HookDescriptor, HookEntry, HookInput, KnowledgeGrant,
    StageFn, StateMap, ToolDescriptor,
};
use plugin_sdk::history::History;
use plugin_sdk::hook::{
    ConversationStart, Event, MessageReceived, ResponseGenerated, ResponseSent,
};
use plugin_sdk::model::Model;
use plugin_sdk::secrets::Secret;
use plugin_sdk::state::State;
use plugin_sdk::turn::{AgentName, Instance, TurnChannel};
use plugin_sdk::{ToolContext, ToolErrorKind};

use super::bridge::{
    Asker, BridgeArtifacts, BridgeAudit, BridgeHistory, BridgeKnowledge, BridgeModel,
};
use crate::wire::{
    ActionStep, Binding, CallFrame, EventPayload, HookDecl, NeedsDecl, Outcome, SecretDecl,
    ToolDecl, WireEvent,
};

/// The tools this binary links, as the engine is told of them and as calls find them.
pub(super) struct Served {
    pub(super) declared: Vec<ToolDecl>,
    pub(super) hooks: Vec<HookDecl>,
    by_id: HashMap<String, &'static ToolDescriptor>,
    hooks_by_id: HashMap<String, &'static HookDescriptor>,
    /// Each plugin's state, built from the settings the engine last sent for it.
    states: Mutex<HashMap<&'static str, (serde_json::Value, AnyState)>>,
}

/// A plugin's state, type-erased, as a context takes it.
type AnyState = Arc<dyn Any + Send + Sync>;

impl Served {
    /// Every tool and hook linked into this binary: each hook overrides the agent's hook
    /// of its id, but those named in `bound`, which run for the session only.
    pub(super) fn linked(bound: &[String]) -> Self {
        let mut declared = Vec::new();
        let mut by_id = HashMap::new();
        for tool in linked_tools() {
            declared.push(declaration(tool));
            by_id.insert(tool.id(), tool);
        }
        let mut hooks = Vec::new();
        let mut hooks_by_id = HashMap::new();
        for hook in linked_hooks() {
            let bind = bound
                .iter()
                .any(|name| *name == hook.name || *name == hook.id());
            hooks.push(hook_declaration(hook, bind));
            hooks_by_id.insert(hook.id(), hook);
        }
        Self {
            declared,
            hooks,
            by_id,
            hooks_by_id,
            states: Mutex::default(),
        }
    }

    /// Runs the hook call `frame` asks for (its arguments are the event's payload), its
    /// questions going through `asker`.
    pub(super) async fn call_hook(&self, frame: CallFrame, asker: Asker) -> Outcome {
        let Some(hook) = self.hooks_by_id.get(&frame.tool).copied() else {
            return failed(
                "failed",
                format!("this development session serves no hook `{}`", frame.tool),
            );
        };
        let payload: EventPayload = match serde_json::from_str(&frame.arguments) {
            Ok(payload) => payload,
            Err(error) => {
                return failed(
                    "failed",
                    format!("the event's payload did not parse: {error}"),
                )
            }
        };
        let context = match self.context(hook.plugin, &frame, asker) {
            Ok(context) => context,
            Err(why) => return failed("failed", why),
        };
        let handler = &hook.handler;
        let outcome = match hook.event() {
            Event::ConversationStart => {
                run_hook::<ConversationStart>(handler, payload, &context).await
            }
            Event::MessageReceived => run_hook::<MessageReceived>(handler, payload, &context).await,
            Event::ResponseGenerated => {
                run_hook::<ResponseGenerated>(handler, payload, &context).await
            }
            Event::ResponseSent => run_hook::<ResponseSent>(handler, payload, &context).await,
        };
        match outcome {
            Ok(outcome) => Outcome::Ok {
                output: serde_json::to_string(&outcome).expect("an outcome always serializes"),
                state_writes: writes_of(&context),
            },
            Err(message) => failed("failed", message),
        }
    }

    /// Runs the call `frame` asks for, its questions going through `asker`.
    pub(super) async fn call(&self, frame: CallFrame, asker: Asker) -> Outcome {
        let Some(tool) = self.by_id.get(&frame.tool).copied() else {
            return failed(
                "failed",
                format!("this development session serves no tool `{}`", frame.tool),
            );
        };
        match (tool.staged, frame.step) {
            (Some(check), Some(ActionStep::Stage)) => return stage(&frame.tool, check, &frame.arguments),
            (Some(_), Some(ActionStep::Perform)) | (None, None) => {}
            (Some(_), None) => {
                return failed(
                    "failed",
                    format!("`{}` is a staged action: a turn stages it and performs it after the reply; it is not called directly", frame.tool),
                )
            }
            (None, Some(_)) => {
                return failed(
                    "failed",
                    format!("`{}` is a tool, not a staged action", frame.tool),
                )
            }
        }
        let context = match self.context(tool.plugin, &frame, asker) {
            Ok(context) => context,
            Err(why) => return failed("failed", why),
        };
        let running = AssertUnwindSafe(tool.call(CallInput::new(&frame.arguments, &context)));
        match running.catch_unwind().await {
            Ok(Ok(output)) => Outcome::Ok {
                output,
                state_writes: writes_of(&context),
            },
            Ok(Err(error)) => {
                let kind = match error.kind() {
                    ToolErrorKind::InvalidArguments => "invalid_arguments",
                    ToolErrorKind::Output => "output",
                    _ => "failed",
                };
                failed(kind, error.message().to_owned())
            }
            Err(payload) => panicked(&frame.tool, &*payload),
        }
    }

    /// The context of one call: what the engine sent with it, and the bridge for the rest.
    fn context(
        &self,
        plugin: fn() -> &'static plugin_sdk::engine::PluginManifest,
        frame: &CallFrame,
        asker: Asker,
    ) -> Result<ToolContext, String> {
        let mut context = ToolContext::new();
        if let Some(locale) = &frame.locale {
            context = context.with_locale(locale.clone());
        }
        if frame.grants.audit {
            context = context.with_audit(Audit::forwarding(Arc::new(BridgeAudit(asker.clone()))));
        }
        if let Some(identity) = &frame.identity {
            context = context.with_identity(
                Instance::new(identity.instance.as_str()),
                AgentName::new(identity.agent.as_str()),
            );
            if let Some(channel) = &identity.channel {
                let channel =
                    TurnChannel::new(channel.name.as_str(), channel.conversation.as_str());
                context = context.with_channel(channel);
            }
        }
        if let Some(turn) = &frame.turn {
            context = context.with_turn(turn.subscriber.clone(), turn.conversation.clone());
            if frame.grants.artifacts {
                let store = Arc::new(BridgeArtifacts(asker.clone()));
                context = context.with_artifacts(Artifacts::new(store, turn.conversation.clone()));
            }
            if frame.grants.history {
                context =
                    context.with_history(History::new(Arc::new(BridgeHistory(asker.clone()))));
            }
        }
        if let Some(state) = &frame.state {
            let snapshot: StateMap = state
                .iter()
                .map(|(key, value)| (key.clone(), raw(value)))
                .collect();
            context = context.with_state(State::new(Arc::new(snapshot)));
        }
        for secret in &frame.secrets {
            let value = Secret::new(secret.value.clone());
            context = if secret.chosen {
                context.with_chosen(secret.key.clone(), value)
            } else {
                context.with_secret(secret.key.clone(), value)
            };
        }
        if let Some(level) = frame.grants.knowledge {
            let store = Arc::new(BridgeKnowledge(asker.clone()));
            let namespace = plugin().namespace;
            context = context.with_knowledge(KnowledgeGrant::new(store, "", namespace, level));
        }
        if frame.grants.model {
            context = context.with_model(Model::new(Arc::new(BridgeModel(asker.clone()))));
        }
        if let Some(settings) = &frame.settings {
            context = context.with_any_plugin_state(self.plugin_state(plugin(), settings)?);
        }
        let deadline = Instant::now() + Duration::from_millis(frame.deadline_ms);
        Ok(context.with_abort(Abort::new(Some(deadline), None)))
    }

    /// The state of `tool`'s plugin built from `settings`: kept while the engine sends
    /// the same settings, built again when they change.
    fn plugin_state(
        &self,
        plugin: &'static plugin_sdk::engine::PluginManifest,
        settings: &serde_json::Value,
    ) -> Result<AnyState, String> {
        let Some(builder) = plugin.state else {
            return Err(format!(
                "the plugin `{}` declares no state",
                plugin.namespace
            ));
        };
        let mut states = self
            .states
            .lock()
            .expect("no state build panics holding the lock");
        if let Some((built_from, state)) = states.get(plugin.namespace) {
            if built_from == settings {
                return Ok(Arc::clone(state));
            }
        }
        let problems = builder.check(settings);
        if let Some(problem) = problems.first() {
            return Err(format!(
                "the agent's settings for `{}` do not suit this build: `{}` {}",
                plugin.namespace, problem.key, problem.problem
            ));
        }
        let state = builder.build(settings.clone())?;
        states.insert(plugin.namespace, (settings.clone(), Arc::clone(&state)));
        Ok(state)
    }
}

/// Runs the hook `handler` at the event of `payload` in `context`: its outcome on the
/// wire, or its error (a panic included).
async fn run_hook<E: WireEvent>(
    handler: &plugin_sdk::engine::HookHandler,
    payload: EventPayload,
    context: &ToolContext,
) -> Result<crate::wire::HookOutcome, String> {
    let Some(entry) = E::entry(handler) else {
        return Err(format!("the hook does not run at `{}`", E::EVENT.as_str()));
    };
    let payload = E::from_payload(payload);
    let input = HookInput::new(&payload).with_context(context);
    let ran = match entry {
        HookEntry::Ready(run) => std::panic::catch_unwind(AssertUnwindSafe(|| run(input))),
        HookEntry::Async(run) => AssertUnwindSafe(run(input)).catch_unwind().await,
    };
    match ran {
        Ok(Ok(outcome)) => Ok(E::outcome_to_wire(outcome)),
        Ok(Err(error)) => Err(error),
        Err(_) => Err("the hook panicked on the developer's machine".to_owned()),
    }
}

/// The state `context`'s call wrote, as the wire carries it.
fn writes_of(
    context: &ToolContext,
) -> std::collections::BTreeMap<String, Option<serde_json::Value>> {
    context
        .take_state_writes()
        .into_iter()
        .map(|(key, value)| (key, value.map(|value| parsed(&value))))
        .collect()
}

/// The stage of the action `id`: its arguments checked by `check`, the action's own
/// deserializer, which runs nothing.
fn stage(id: &str, check: StageFn, arguments: &str) -> Outcome {
    match std::panic::catch_unwind(|| check(arguments)) {
        Ok(Ok(())) => Outcome::Ok {
            output: "null".to_owned(),
            state_writes: Default::default(),
        },
        Ok(Err(error)) => failed("invalid_arguments", error.message().to_owned()),
        Err(payload) => panicked(id, &*payload),
    }
}

/// The outcome of a call of `id` that panicked: the payload goes to the log only.
fn panicked(id: &str, payload: &(dyn Any + Send)) -> Outcome {
    let text = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a non-text panic payload");
    tracing::error!(tool = id, panic = text, "a dev tool panicked");
    failed(
        "panicked",
        format!("`{id}` failed unexpectedly on the developer's machine and was stopped"),
    )
}

fn failed(kind: &str, message: String) -> Outcome {
    Outcome::Err {
        kind: kind.to_owned(),
        message,
    }
}

/// What of the context `needs` reads, as the wire says it.
fn needs_decl(
    needs: plugin_sdk::engine::Needs,
    knowledge: Option<plugin_sdk::engine::KnowledgeNeed>,
) -> NeedsDecl {
    NeedsDecl {
        conversation: needs.conversation,
        model: needs.model,
        audit: needs.audit,
        project: needs.project,
        plugin_state: needs.state.is_some(),
        knowledge: knowledge.map(|need| (need.level, need.required)),
        identity: needs.identity,
        history: needs.history,
        oauth: needs.oauth,
    }
}

/// How the engine is told of `hook`: bound for the session, or overriding its id.
fn hook_declaration(hook: &'static HookDescriptor, bound: bool) -> HookDecl {
    HookDecl {
        namespace: (hook.plugin)().namespace.to_owned(),
        name: hook.name.to_owned(),
        event: hook.event().as_str().to_owned(),
        binding: if bound {
            Binding::Bound {
                position: hook.position,
            }
        } else {
            Binding::Overrides { hook: hook.id() }
        },
        timeout_ms: u64::try_from(hook.timeout.as_millis()).unwrap_or(u64::MAX),
        mutates_response: hook.mutates_response,
        needs: needs_decl(hook.needs, None),
        secrets: hook
            .secret_specs()
            .map(|spec| SecretDecl {
                key: spec.key.to_owned(),
            })
            .collect(),
    }
}

/// How the engine is told of `tool`.
fn declaration(tool: &'static ToolDescriptor) -> ToolDecl {
    ToolDecl {
        namespace: (tool.plugin)().namespace.to_owned(),
        name: tool.name.to_owned(),
        description: tool.description.to_owned(),
        summary: tool.summary_for("en-US").to_owned(),
        category: tool.category.map(str::to_owned),
        input_schema: (tool.input_schema)().to_value(),
        strict: tool.strict,
        exclusive: tool.exclusive,
        action: tool.is_action(),
        needs: needs_decl(tool.needs, tool.knowledge),
        secrets: tool
            .secret_specs()
            .map(|spec| SecretDecl {
                key: spec.key.to_owned(),
            })
            .collect(),
    }
}

/// A value of the wire as the state keeps it.
fn raw(value: &serde_json::Value) -> Box<serde_json::value::RawValue> {
    serde_json::value::to_raw_value(value).expect("a JSON value always serializes")
}

/// A value the state kept, as the wire carries it.
fn parsed(value: &serde_json::value::RawValue) -> serde_json::Value {
    serde_json::from_str(value.get()).expect("the state keeps JSON")
}
