//! The context of one call, built from the agent and the turn, never from the model: only
//! what the tool's parameters declare they read.

use std::sync::Arc;

use plugin_sdk::abort::Abort;
use plugin_sdk::artifacts::Artifacts;
use plugin_sdk::audit::Audit;
use plugin_sdk::engine::KnowledgeGrant;
use plugin_sdk::engine::Redact;
use plugin_sdk::engine::{Needs, SecretSpec, StateMap, StateWrites};
use plugin_sdk::history::History;
use plugin_sdk::model::Model;
use plugin_sdk::oauth::OAuth;
use plugin_sdk::secrets::{Secret, SecretKind};
use plugin_sdk::state::State;
use plugin_sdk::ToolContext;

use plugin_sdk::hook::Event;

use plugin_dev_wire::{
    CallFrame, ChannelDecl, Grants, IdentityDecl, NeedsDecl, SecretDecl, SecretValue, TurnDecl,
};

use super::history::{self, StepHistory};
use super::{Runtime, Turn};
use crate::agent::Agent;
use crate::dev::DevTool;
use crate::dispatch::Called;
use crate::dispatch::{Bounds, CallError, CallErrorKind};
use crate::hooks::{Hook, HookRun, RemoteHook, Written};
use crate::model::MeteredModel;
use crate::oauth::{CallBroker, CallRedaction};
use crate::tool::Tool;

impl Runtime {
    /// The context of one call of `tool` in `turn`: the tool's declared secrets and no
    /// other, the agent's grants, the turn's identity, state snapshot and artifacts, each
    /// only if a parameter of the tool reads it.
    ///
    /// `history`: the turn's messages up to the call, in a step; else a `History` reads
    /// the stored ones.
    pub(super) fn context(
        &self,
        turn: &Turn,
        tool: &Tool,
        bounds: &Bounds<'_>,
        history: Option<&StepHistory<'_>>,
    ) -> ToolContext {
        let agent = self.agent_of(turn);
        let descriptor = tool.descriptor();
        let needs = descriptor.needs;
        let mut context = ToolContext::new();
        if let Some(locale) = &turn.locale {
            context = context.with_locale(locale.clone());
        }
        if needs.identity {
            context = with_identity(context, turn);
        }
        if let Some(at) = turn
            .conversation
            .as_ref()
            .filter(|_| needs.conversation || needs.audit)
        {
            context = context.with_turn(at.subscriber.clone(), at.conversation.clone());
            // An action gets the subscriber and nothing of the conversation, whatever its
            // parameters claim (start-up refuses one that reads the model or knowledge).
            if needs.conversation && !tool.is_action() {
                context = context
                    .with_state(State::new(self.states.snapshot(&at.conversation)))
                    .with_artifacts(Artifacts::new(
                        Arc::clone(&self.artifacts) as _,
                        at.conversation.clone(),
                    ));
                if needs.history {
                    context = context.with_history(self.history(turn, &at.conversation, history));
                }
            }
        }
        context = with_declared_secrets(context, agent, descriptor.secret_specs());
        // A tool handed OAuth tokens has them redacted from its records and its output
        // (see `keep_state`) by the call's own redactor, which learns each as it is handed.
        let oauth = match (&self.oauth, &turn.conversation) {
            (Some(broker), Some(at)) if needs.oauth => {
                let redaction = Arc::new(CallRedaction::new(Arc::clone(agent.redaction())));
                // A subscriber id is its channel's: the same id through another channel
                // (or the turn route) may be someone else, and holds no grant of theirs.
                let subscriber =
                    (at.subscriber != crate::ANONYMOUS_SUBSCRIBER).then(|| match &turn.channel {
                        Some(channel) => format!("{}/{}", channel.name(), at.subscriber),
                        None => at.subscriber.clone(),
                    });
                let broker = CallBroker {
                    broker: Arc::clone(broker),
                    agent: Arc::clone(&turn.agent),
                    plugin: tool.plugin(),
                    subscriber,
                    redaction: Arc::clone(&redaction),
                };
                context = context.with_oauth(OAuth::new(Arc::new(broker)));
                Some(redaction)
            }
            _ => None,
        };
        if needs.audit || oauth.is_some() {
            let redact: Arc<dyn Redact> = match oauth {
                Some(redaction) => redaction,
                None => Arc::clone(agent.redaction()) as _,
            };
            context = context.with_audit(Audit::new(redact, tool.audit_source()));
        }
        if let (Some(_), Some(level), Some(store)) = (
            descriptor.knowledge,
            agent.config().knowledge,
            &self.knowledge,
        ) {
            let grant = KnowledgeGrant::new(
                Arc::clone(store),
                agent.name().to_owned(),
                tool.plugin().namespace,
                level,
            );
            context = context.with_knowledge(grant);
        }
        // An action is given no state, whatever its parameters claim (start-up refuses one
        // that takes it).
        let state = needs
            .state
            .filter(|_| !tool.is_action())
            .and_then(|_| self.registry.tool_index(tool.id()))
            .and_then(|index| agent.state_of(index));
        if let Some(state) = state {
            context = context.with_any_plugin_state(Arc::clone(state));
        }
        if needs.abort {
            context = context.with_abort(abort_signal(bounds));
        }
        if let (true, Some(project)) = (needs.project, agent.project()) {
            context = context.with_project(project.clone());
        }
        if let (true, Some(_), Some(gateway)) = (needs.model, agent.config().model, &self.gateway) {
            context = context.with_model(Model::new(Arc::new(MeteredModel {
                gateway: Arc::clone(gateway),
                spend: Arc::clone(&turn.spend),
                tool: tool.id().to_owned(),
                deadline: bounds.deadline_or_default(),
                cancel: bounds.cancel.cloned().unwrap_or_default(),
            })));
        }
        context
    }

    /// The run of `hook` in `turn`: the turn's identity, state snapshot (before the turn
    /// is stored), declared secrets, audit logger, model access and abort signal, each only
    /// if a parameter of the hook reads it; its deadline is the hook's timeout from now.
    ///
    /// `None` for a hook that reads the conversation, in a turn without one: it does not
    /// run there (as a tool that needs one is not offered there).
    pub(super) fn hook_run(&self, turn: &Turn, hook: &Hook, pending: &Written) -> Option<HookRun> {
        if let Some(remote) = hook.remote() {
            return self.remote_hook_run(turn, hook, remote.as_ref(), pending);
        }
        let descriptor = hook.descriptor();
        let needs = descriptor.needs;
        if needs.conversation && turn.conversation.is_none() {
            return None;
        }
        if needs == Needs::NOTHING && descriptor.secrets.iter().all(|specs| specs.is_empty()) {
            return Some(HookRun {
                context: None,
                abort: Abort::default(),
                frame: None,
            });
        }
        let agent = self.agent_of(turn);
        let deadline = tokio::time::Instant::now() + hook.timeout();
        let mut context = ToolContext::new();
        if let Some(locale) = &turn.locale {
            context = context.with_locale(locale.clone());
        }
        if needs.identity {
            context = with_identity(context, turn);
        }
        if let Some(at) = turn
            .conversation
            .as_ref()
            .filter(|_| needs.conversation || needs.audit)
        {
            context = context.with_turn(at.subscriber.clone(), at.conversation.clone());
            // `response_sent` hooks take no state: the compiler refuses `&State` there.
            if needs.conversation && hook.event() != Event::ResponseSent {
                let snapshot = self.states.snapshot(&at.conversation);
                context = context.with_state(State::new(with_pending(snapshot, pending)));
            }
            // A hook reads the history as stored: its payload holds its turn's message
            // and reply.
            if needs.history {
                context = context.with_history(self.history(turn, &at.conversation, None));
            }
        }
        context = with_declared_secrets(context, agent, descriptor.secret_specs());
        if needs.audit {
            context = context.with_audit(Audit::new(
                Arc::clone(agent.redaction()) as _,
                Arc::from(hook.id()),
            ));
        }
        if let (true, Some(_), Some(gateway)) = (needs.model, agent.config().model, &self.gateway) {
            context = context.with_model(Model::new(Arc::new(MeteredModel {
                gateway: Arc::clone(gateway),
                spend: Arc::clone(&turn.spend),
                tool: hook.id().to_owned(),
                deadline,
                cancel: Default::default(),
            })));
        }
        let abort = if needs.abort {
            Abort::new(Some(deadline.into_std()), None)
        } else {
            Abort::default()
        };
        Some(HookRun {
            context: Some(context.with_abort(abort.clone())),
            abort,
            frame: None,
        })
    }

    /// The run of a dev session's hook in `turn`: its context and frame as a session
    /// tool's, from what it declares, over the state the hooks before it wrote; its
    /// deadline is the hook's timeout from now.
    fn remote_hook_run(
        &self,
        turn: &Turn,
        hook: &Hook,
        remote: &dyn RemoteHook,
        pending: &Written,
    ) -> Option<HookRun> {
        let mut needs = remote.needs();
        if needs.conversation && turn.conversation.is_none() {
            return None;
        }
        // `response_sent` hooks take no state: the turn is stored.
        needs.conversation &= hook.event() != Event::ResponseSent;
        let callee = DevCallee {
            id: hook.id(),
            process_id: remote.process_id(),
            namespace: remote.namespace(),
            needs,
            secrets: remote.secrets(),
            action: false,
        };
        let deadline = tokio::time::Instant::now() + hook.timeout();
        let (context, frame) =
            self.dev_context(turn, callee, String::new(), deadline, None, pending, None);
        Some(HookRun {
            context: Some(context),
            abort: Abort::default(),
            frame: Some(frame),
        })
    }

    /// Keeps the state the hooks of `turn` wrote, in the order they ran; a hook whose
    /// writes break the state's limits loses them, logged.
    pub(super) fn keep_hook_state(&self, turn: &Turn, written: Written) {
        if written.is_empty() {
            return;
        }
        let Some(at) = &turn.conversation else { return };
        for (hook, writes) in written {
            if let Err(refusal) = self.states.apply(&at.conversation, writes) {
                tracing::warn!(hook, %refusal, "a hook's state writes were not kept");
            }
        }
    }

    /// Applies the state a successful call wrote to its conversation, and answers the
    /// call's result: a call whose writes break the state's limits fails, saying which,
    /// and none of its writes is kept.
    pub(super) fn keep_state(
        &self,
        turn: &Turn,
        tool: &Tool,
        context: &ToolContext,
        result: Result<String, CallError>,
    ) -> Result<String, CallError> {
        if let (true, Ok(_), Some(at)) = (
            tool.descriptor().needs.conversation,
            &result,
            &turn.conversation,
        ) {
            self.keep_writes(tool, &at.conversation, context.take_state_writes())?;
        }
        if tool.descriptor().needs.oauth {
            let redact = context.redactor();
            return result
                .map(|output| redact.redact(&output).into_owned())
                .map_err(|error| error.redacted(&redact));
        }
        result
    }

    /// Applies the state writes of `tool`'s successful call to `conversation`: all, or
    /// none and the call fails, saying which limit they break.
    pub(super) fn keep_writes(
        &self,
        tool: &impl Called,
        conversation: &str,
        writes: StateWrites,
    ) -> Result<(), CallError> {
        self.states.apply(conversation, writes).map_err(|refusal| {
            CallError::new(
                CallErrorKind::Failed,
                format!(
                    "`{}` ran, and its state was not kept: {refusal}",
                    tool.wire_name()
                ),
            )
        })
    }

    /// The context of one call of the session tool `tool` in `turn`, built as a linked
    /// tool's of the same declaration would be, and the frame that carries what the
    /// author's process is given of it: the declared secrets and no other, the state
    /// snapshot, the plugin's settings, and which questions the engine answers;
    /// `history` as [`context`](Self::context) takes it.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn dev_context(
        &self,
        turn: &Turn,
        tool: DevCallee<'_>,
        arguments: String,
        deadline: tokio::time::Instant,
        cancel: Option<&tokio_util::sync::CancellationToken>,
        pending: &Written,
        history: Option<&StepHistory<'_>>,
    ) -> (ToolContext, CallFrame) {
        let agent = self.agent_of(turn);
        let needs = tool.needs;
        // A knowledge handle audits every call, as a linked tool's does.
        let audit = needs.audit || needs.knowledge.is_some();
        let mut context = ToolContext::new();
        let mut frame = CallFrame {
            call: 0,
            tool: tool.process_id,
            event: None,
            step: None,
            arguments,
            locale: turn.locale.clone(),
            turn: None,
            identity: None,
            secrets: Vec::new(),
            state: None,
            settings: None,
            deadline_ms: 0,
            grants: Grants::default(),
        };
        if let Some(locale) = &turn.locale {
            context = context.with_locale(locale.clone());
        }
        if needs.identity {
            context = with_identity(context, turn);
            let identity = agent.identity();
            frame.identity = Some(IdentityDecl {
                instance: identity.instance.slug().to_owned(),
                agent: identity.agent.name().to_owned(),
                channel: turn.channel.as_ref().map(|channel| ChannelDecl {
                    name: channel.name().to_owned(),
                    conversation: channel.conversation().to_owned(),
                }),
            });
        }
        if let Some(at) = turn
            .conversation
            .as_ref()
            .filter(|_| needs.conversation || audit || needs.history)
        {
            context = context.with_turn(at.subscriber.clone(), at.conversation.clone());
            frame.turn = Some(TurnDecl {
                subscriber: at.subscriber.clone(),
                conversation: at.conversation.clone(),
            });
            if needs.conversation && !tool.action {
                let snapshot = with_pending(self.states.snapshot(&at.conversation), pending);
                frame.state = Some(
                    snapshot
                        .iter()
                        .map(|(key, value)| (key.clone(), json_of(value)))
                        .collect(),
                );
                context = context.with_artifacts(Artifacts::new(
                    Arc::clone(&self.artifacts) as _,
                    at.conversation.clone(),
                ));
                frame.grants.artifacts = true;
            }
            // Apart from the state: a hook at `response_sent` reads the history, not the
            // state.
            if needs.history && !tool.action {
                context = context.with_history(self.history(turn, &at.conversation, history));
                frame.grants.history = true;
            }
        }
        // As the agent gives them now: a reload may have taken one back.
        let given = tool.secrets.iter().map(|secret| &secret.key);
        for key in given.filter(|key| crate::dev::dev_may_read(agent.config(), key)) {
            if let Some(value) = agent.config().secrets.get(key) {
                let chosen = crate::config::is_published_choice(key, value);
                frame.secrets.push(SecretValue {
                    key: key.clone(),
                    value: value.clone(),
                    chosen,
                });
                context = if chosen {
                    context.with_chosen(key.clone(), Secret::new(value))
                } else {
                    context.with_secret(key.clone(), Secret::new(value))
                };
            }
        }
        if audit {
            context = context.with_audit(Audit::new(
                Arc::clone(agent.redaction()) as _,
                Arc::from(tool.id),
            ));
            frame.grants.audit = true;
        }
        if let (Some(_), Some(level), Some(store)) =
            (needs.knowledge, agent.config().knowledge, &self.knowledge)
        {
            context = context.with_knowledge(KnowledgeGrant::new(
                Arc::clone(store),
                agent.name().to_owned(),
                tool.namespace,
                level,
            ));
            frame.grants.knowledge = Some(level);
        }
        if let (true, Some(_), Some(gateway)) = (needs.model, agent.config().model, &self.gateway) {
            context = context.with_model(Model::new(Arc::new(MeteredModel {
                gateway: Arc::clone(gateway),
                spend: Arc::clone(&turn.spend),
                tool: tool.id.to_owned(),
                deadline,
                cancel: cancel.cloned().unwrap_or_default(),
            })));
            frame.grants.model = true;
        }
        if needs.plugin_state {
            frame.settings = agent
                .config()
                .plugins
                .get(tool.namespace)
                .and_then(|settings| serde_json::to_value(settings).ok());
        }
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        frame.deadline_ms = u64::try_from(left.as_millis()).unwrap_or(u64::MAX);
        (context, frame)
    }
}

impl Runtime {
    /// The history of `conversation` a call of `turn` reads: `in_step`'s, when it is
    /// made in a step; else the stored messages, read when asked.
    fn history(
        &self,
        turn: &Turn,
        conversation: &str,
        in_step: Option<&StepHistory<'_>>,
    ) -> History {
        let redact = self.agent_of(turn).redaction();
        match in_step {
            Some(step) => History::new(step.snapshot(redact)),
            None => History::new(Arc::new(history::Stored {
                conversations: self.conversations.load_full(),
                conversation: conversation.to_owned(),
                redact: Arc::clone(redact),
                read: Default::default(),
            })),
        }
    }
}

/// `context` in the agent's engine instance, for the agent, and in the channel `turn`
/// came through, if its caller said.
fn with_identity(context: ToolContext, turn: &Turn) -> ToolContext {
    let identity = turn.agent.identity();
    let context = context.with_identity(identity.instance.clone(), identity.agent.clone());
    match &turn.channel {
        Some(channel) => context.with_channel(channel.clone()),
        None => context,
    }
}

/// What a dev session's tool or hook is, as its context is built.
pub(super) struct DevCallee<'a> {
    /// Its id in the engine: what its audit records and model calls are counted as.
    pub(super) id: &'a str,
    /// The id its process knows it by, which its frame names.
    pub(super) process_id: String,
    /// Its plugin's namespace: where it writes in the knowledge base, whose settings.
    pub(super) namespace: &'a str,
    pub(super) needs: NeedsDecl,
    pub(super) secrets: &'a [SecretDecl],
    /// Whether it is a staged action, given the subscriber and nothing of the
    /// conversation, whatever its declaration claims.
    pub(super) action: bool,
}

impl<'a> DevCallee<'a> {
    /// A session's tool.
    pub(super) fn tool(tool: &'a DevTool) -> Self {
        Self {
            id: tool.id(),
            process_id: tool.id().to_owned(),
            namespace: tool.namespace(),
            needs: tool.decl().needs,
            secrets: &tool.decl().secrets,
            action: tool.is_action(),
        }
    }
}

/// The abort signal of one call: its deadline, and the turn's cancellation asked of its
/// token (a body without `.await` sees a cancellation that came while it ran).
pub(super) fn abort_signal(bounds: &Bounds<'_>) -> Abort {
    let cancelled = bounds.cancel.map(|token| {
        let token = token.clone();
        Box::new(move || token.is_cancelled()) as Box<dyn Fn() -> bool + Send + Sync>
    });
    Abort::new(Some(bounds.deadline_or_default().into_std()), cancelled)
}

/// `context` holding each of `specs` the agent configures, and no other secret: a tool's
/// and a hook's alike.
fn with_declared_secrets<'s>(
    mut context: ToolContext,
    agent: &Agent,
    specs: impl Iterator<Item = &'s SecretSpec>,
) -> ToolContext {
    for spec in specs {
        if let Some(value) = agent.config().secrets.get(spec.key) {
            context = with_secret(context, spec, value);
        }
    }
    context
}

/// `context` holding `spec`'s secret `value`: redacted from what it audits, but for one
/// of the choices a `select` publishes (what the engine's redactor leaves too).
fn with_secret(context: ToolContext, spec: &SecretSpec, value: &str) -> ToolContext {
    // Only a select's value looks through the linked declarations of its key.
    let choice = matches!(spec.kind, SecretKind::Select(choices) if choices.contains(&value));
    if choice && crate::config::is_published_choice(spec.key, value) {
        context.with_chosen(spec.key, Secret::new(value))
    } else {
        context.with_secret(spec.key, Secret::new(value))
    }
}

/// `snapshot` with the writes of the hooks that ran before in the same pass laid over it,
/// so that a hook reads what an earlier one wrote; the snapshot itself when there are
/// none, as for most hooks.
fn with_pending(snapshot: Arc<StateMap>, pending: &Written) -> Arc<StateMap> {
    if pending.is_empty() {
        return snapshot;
    }
    let mut state = StateMap::clone(&snapshot);
    for (_, writes) in pending {
        for (key, value) in writes {
            match value {
                Some(value) => state.insert(key.clone(), value.clone()),
                None => state.remove(key),
            };
        }
    }
    Arc::new(state)
}

/// A value the state keeps, as a dev session's frame carries it.
fn json_of(value: &serde_json::value::RawValue) -> serde_json::Value {
    serde_json::from_str(value.get()).expect("the state keeps JSON")
}
