//! The agent turn: the model is asked, the tools it calls run, their results go back,
//! until it answers or a limit, the deadline or a cancellation ends the turn. Hooks run
//! around it (the pipeline of [`Engine::run_turn`]); the conversation is stored step by
//! step, so that every tool call in it has its answer.

mod actions;
mod events;
mod kept_call;
mod tools;

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Mutex;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

pub use events::TurnEvent;

use crate::outcome::{Limit, Stop, TurnSummary};

use super::{Engine, Turn, TurnEnd, TurnOutcome};
use crate::config::TurnConfig;
use crate::conversation::{Message, ToolStatus};
use crate::model::{RequestSpend, SharedWindow};
use crate::provider::{Provider, ProviderError, ProviderRequest, Usage};
use crate::stores::{ActionRecord, ConversationError, Conversations, TurnLease};
use actions::StagedActions;
use tools::{run_calls, unrun, CallCounts, StepLimits};

/// How a client stops a running turn.
#[derive(Clone, Debug, Default)]
pub struct TurnControl {
    /// Stops at once: the provider's stream is dropped, running tools are cancelled, and
    /// their calls answered as cancelled.
    pub cancel: CancellationToken,
    /// Stops after the step under way: its tools finish and are answered, and no further
    /// model request is made.
    pub stop_after_step: CancellationToken,
    /// Cancelled by the engine, as a signal that the turn has begun: once it holds its
    /// conversation, or at once for a turn outside any. A turn refused before that (busy,
    /// or failed) never cancels it, and its first event says why. A server waits on it
    /// to choose its answer's status before any event exists, which may be the turn's
    /// end. (Cancelling it does nothing to the turn.)
    pub begun: CancellationToken,
}

/// Why the model loop stopped without an answer.
enum Interrupted {
    Deadline,
    Cancelled,
    Provider(ProviderError),
    /// A cap on the turn's own model spend had no room for the next request.
    Spend(String),
    /// The conversation store failed: nothing more is asked, since it could not be kept.
    Store(String),
}

/// What the loop shares with the hook pipeline's `generate` calls.
struct Progress<'a> {
    history: Vec<Message>,
    /// How many messages of `history` are stored.
    stored: usize,
    /// Where the model's answer is in `history`, once it answered.
    answer_at: Option<usize>,
    /// Whether the model called tools in this turn: only then can a limit have cut it.
    called_tools: bool,
    counts: CallCounts,
    /// The actions staged for the reply being generated.
    actions: StagedActions,
    /// The turn's hold on its conversation, in a conversation.
    lease: Option<TurnLease>,
    /// Whether the conversation is no one's yet: the first step stored claims it.
    unclaimed: bool,
    /// Where this turn's messages begin in `history`: a call id that repeats one of the
    /// turn's earlier calls (some servers number each reply's calls from `call_0`) is
    /// renamed, so that each call, and the action it may stage, is one of its own.
    turn_start: usize,
    usage: Usage,
    cost_usd: f64,
    model_requests: u32,
    limit: Option<Limit>,
    events: &'a mut (dyn FnMut(TurnEvent) + Send),
}

impl Engine {
    /// Runs one turn of `turn`'s agent for the user's `message` (`None` resumes the
    /// conversation from its last completed step), sending each [`TurnEvent`] to
    /// `events`, the last a [`TurnEvent::Done`].
    ///
    /// The agent needs a `turn` configuration and a provider. A turn in a conversation
    /// reads and extends its stored history; one outside any conversation starts empty
    /// and keeps nothing.
    pub async fn converse(
        &self,
        turn: &Turn,
        message: Option<&str>,
        control: &TurnControl,
        events: &mut (dyn FnMut(TurnEvent) + Send),
    ) -> TurnSummary {
        // What leaves a turn, leaves redacted: its events here, the summary it stores and
        // answers where each is made (`failed` below, and at the end).
        let redact = self.redact();
        let mut redacting = |event: TurnEvent| events(event.redacted(&redact));
        let events: &mut (dyn FnMut(TurnEvent) + Send) = &mut redacting;
        let failed = |events: &mut (dyn FnMut(TurnEvent) + Send), message: String| {
            let summary = TurnSummary::failed(message).redacted(&redact);
            if let Stop::Failed { message } = &summary.stop {
                events(TurnEvent::Error {
                    message: message.clone(),
                });
            }
            done(events, summary)
        };
        let agent = self.agent_of(turn);
        let (Some(config), Some(provider)) = (agent.config.turn.as_ref(), agent.provider.as_ref())
        else {
            return failed(
                events,
                format!("the agent `{}` has no `turn` configuration", agent.name()),
            );
        };
        let conversations = self.conversations.load_full();
        let store = turn.conversation().map(|id| (conversations.as_ref(), id));
        let busy = |events: &mut (dyn FnMut(TurnEvent) + Send), id: &str, where_: &str| {
            let message = format!(
                "a turn of the conversation `{id}` is under way{where_}: send this one again once it ends"
            );
            done(events, TurnSummary::stopped(Stop::Busy { message }))
        };
        let running = match turn.conversation() {
            Some(id) => match RunningTurn::start(&self.running, id) {
                Some(running) => Some(running),
                None => return busy(events, id, ""),
            },
            None => None,
        };
        // Across replicas and processes: this process's turns are kept apart above, the
        // others' by the store.
        let lease = match store {
            Some((store, id)) => match store.begin_turn(id).await {
                Ok(Some(lease)) => Some(lease),
                Ok(None) => return busy(events, id, " in another process or replica"),
                Err(error) => {
                    return failed(
                        events,
                        format!("the conversation could not be begun: {error}"),
                    )
                }
            },
            None => None,
        };
        // A turn that cannot go on from here lets go of its conversation, recording
        // nothing: it did nothing (a lease dropped instead would leave it interrupted).
        let let_go = |lease: Option<TurnLease>| async {
            if let (Some((store, id)), Some(lease)) = (store, lease) {
                if let Err(error) = store.end_turn(lease, None).await {
                    tracing::warn!(conversation = id, %error, "the conversation could not be let go");
                }
            }
        };
        // Another's conversation is refused before anything of it is read; one that is
        // no one's yet becomes the turn's when it stores its first message (`Run::flush`),
        // not before. Checked under the lease: no other turn can claim it meanwhile.
        let mut unclaimed = false;
        if let (Some((store, id)), Some(subscriber)) = (store, turn.subscriber()) {
            match store.may_continue(id, agent.name(), subscriber).await {
                Ok(owned) => unclaimed = !owned,
                Err(error) => {
                    let_go(lease).await;
                    return failed(events, error.to_string());
                }
            }
        }
        control.begun.cancel();
        let mut history = match store {
            Some((store, id)) => match store.load(id).await {
                Ok(history) => history,
                Err(error) => {
                    let_go(lease).await;
                    return failed(
                        events,
                        format!("the conversation could not be read: {error}"),
                    );
                }
            },
            None => Vec::new(),
        };
        if let Some((store, id)) = store {
            if let Err(error) = self.restore_state(store, id).await {
                let_go(lease).await;
                return failed(
                    events,
                    format!("the conversation's state could not be restored: {error}"),
                );
            }
            let is_action = |name: &str| {
                self.registry
                    .tool_index(name)
                    .is_some_and(|index| self.registry.tools()[index].is_action())
            };
            actions::settle_left_behind(&mut history, store, id, is_action).await;
        }
        let first = !history
            .iter()
            .any(|message| matches!(message, Message::User { .. }));
        let stored = history.len();
        let user_text = match message {
            Some(text) => {
                history.push(Message::user(text));
                text.to_owned()
            }
            None => match resumed_message(&history) {
                Some(text) => text.to_owned(),
                None => {
                    let_go(lease).await;
                    return failed(
                        events,
                        "nothing to resume: the conversation has no step left unfinished".into(),
                    );
                }
            },
        };
        let progress = Mutex::new(Progress {
            history,
            stored,
            answer_at: None,
            called_tools: false,
            counts: CallCounts::default(),
            actions: StagedActions::default(),
            lease,
            unclaimed,
            turn_start: stored,
            usage: Usage::default(),
            cost_usd: 0.0,
            model_requests: 0,
            limit: None,
            events,
        });
        let window = config.window();
        let shared_window = self.spend_ledger.as_ref().map(|ledger| SharedWindow {
            ledger: Arc::clone(ledger),
            // Apart from the agent's tools' window (agent names hold no `/`).
            agent: format!("{}/turns", agent.name()),
            cap_usd: window.cap_usd,
            secs: window.secs,
        });
        let run = Run {
            engine: self,
            turn,
            config,
            provider: provider.as_ref(),
            control,
            deadline: Instant::now() + Duration::from_secs(config.deadline_secs),
            store,
            spend: RequestSpend::new(
                config.spend_cap_usd,
                agent.turn_window.clone(),
                shared_window,
            ),
        };
        // A regeneration is one more model request: none past the turn's last.
        let may_regenerate = || {
            progress
                .try_lock()
                .is_ok_and(|progress| progress.model_requests < config.max_model_requests)
        };
        let outcome = self
            .run_turn_within(
                turn,
                &user_text,
                first,
                |input| {
                    let progress = &progress;
                    let run = &run;
                    async move {
                        let mut progress = progress.lock().await;
                        run.generate(&mut progress, &input.injected_context, input.stream)
                            .await
                    }
                },
                &may_regenerate,
            )
            .await;
        let mut progress = progress.into_inner();
        let persist = outcome.as_ref().map_or(true, |outcome| outcome.persist);
        let stop = match outcome {
            Ok(outcome) => {
                let stop = match &outcome.end {
                    TurnEnd::Halted { hook } => Stop::Halted { hook: hook.clone() },
                    TurnEnd::FailedClosed { hook } => Stop::FailedClosed { hook: hook.clone() },
                    TurnEnd::Replaced { hook } => Stop::Replaced { hook: hook.clone() },
                    TurnEnd::Generated => match progress.limit {
                        Some(limit) => Stop::Limit { limit },
                        None => Stop::Answered,
                    },
                };
                let streamed = matches!(stop, Stop::Answered | Stop::Limit { .. }) && run.streams();
                if !streamed {
                    // Held for the hooks, or a hook's own text: nothing of it went out.
                    (progress.events)(TurnEvent::Chat {
                        text: outcome.reply.clone(),
                    });
                }
                // The step with the reply is stored before anything is performed: an
                // action must never outlive a reply that was lost.
                let kept = outcome.persist && {
                    match progress.answer_at {
                        Some(at) => set_content(&mut progress.history[at], &outcome.reply),
                        None => progress.history.push(Message::assistant(
                            outcome.reply.clone(),
                            Vec::new(),
                            "",
                            Default::default(),
                        )),
                    }
                    run.flush(&mut progress).await
                };
                match run.why_not_perform(&stop, &outcome, kept) {
                    None => {
                        actions::perform_staged(
                            self,
                            turn,
                            store,
                            run.tool_timeout(),
                            &mut progress,
                        )
                        .await
                    }
                    Some(reason) => actions::drop_staged(&mut progress, store, &reason).await,
                }
                (stop, outcome.reply)
            }
            Err(interrupted) => {
                run.flush(&mut progress).await;
                let reason = match &interrupted {
                    Interrupted::Deadline => "the turn's deadline passed before the reply",
                    Interrupted::Cancelled => "the turn was cancelled before the reply",
                    Interrupted::Provider(_) => "the provider failed before the reply",
                    Interrupted::Spend(_) => "the turn's spend cap had no room for the reply",
                    Interrupted::Store(_) => "the conversation store failed",
                };
                actions::drop_staged(&mut progress, store, reason).await;
                let stop = match interrupted {
                    Interrupted::Deadline => Stop::Deadline,
                    Interrupted::Cancelled => Stop::Cancelled,
                    Interrupted::Provider(error) => Stop::ProviderError {
                        message: error.to_string(),
                    },
                    Interrupted::Store(message) => Stop::Failed { message },
                    Interrupted::Spend(message) => {
                        (progress.events)(TurnEvent::Error { message });
                        Stop::Limit {
                            limit: Limit::Spend,
                        }
                    }
                };
                if let Stop::ProviderError { message } | Stop::Failed { message } = &stop {
                    (progress.events)(TurnEvent::Error {
                        message: message.clone(),
                    });
                }
                (stop, String::new())
            }
        };
        let (stop, reply) = stop;
        let summary = TurnSummary {
            stop: stop.redacted(&redact),
            reply,
            usage: progress.usage,
            cost_usd: progress.cost_usd,
            model_requests: progress.model_requests,
        };
        // The turn is stored and its conversation let go before `done` goes out: a client
        // that sends the next turn at once finds it free, on any replica. A halt that
        // asked for no trace keeps nothing: no record, no state.
        if let (Some((store, id)), Some(lease)) = (store, progress.lease.take()) {
            let state = persist.then(|| {
                serde_json::to_string(&*self.states.snapshot(id)).expect("state serializes")
            });
            let ended = state.map(|state| (&summary, state));
            if let Err(error) = store.end_turn(lease, ended).await {
                tracing::warn!(conversation = id, %error, "the turn's end could not be stored");
            }
        }
        drop(running);
        let summary = done(progress.events, summary);
        if matches!(
            summary.stop,
            Stop::Answered | Stop::Limit { .. } | Stop::Replaced { .. }
        ) {
            self.response_sent(turn, &user_text, &summary.reply).await;
        }
        summary
    }
}

impl Engine {
    /// The stored messages of `conversation`, oldest first.
    pub async fn conversation(
        &self,
        conversation: &str,
    ) -> Result<Vec<Message>, ConversationError> {
        let conversations = self.conversations.load_full();
        conversations.load(conversation).await
    }

    /// The staged actions `conversation`'s turns performed (or tried to), oldest first.
    pub async fn conversation_actions(
        &self,
        conversation: &str,
    ) -> Result<Vec<ActionRecord>, ConversationError> {
        let conversations = self.conversations.load_full();
        conversations.actions(conversation).await
    }
}

impl Engine {
    /// Brings back the state `conversation`'s tools kept, as the store holds it: at the
    /// end of its last turn (or call) in any process or replica sharing the store, which
    /// is newer than what this process remembers (another process may have written it
    /// since). A stored state that cannot be read or taken in fails the turn (`Err`),
    /// since going on would store this process's older state over it. A store of this
    /// process only (memory) is not read: what it holds is what this process remembers.
    async fn restore_state(&self, store: &Conversations, conversation: &str) -> Result<(), String> {
        if !store.keeps_state() {
            return Ok(());
        }
        self.restore_stored(store, conversation).await
    }

    /// Reads `conversation`'s stored state into memory, over what memory holds (none
    /// stored: empty).
    async fn restore_stored(
        &self,
        store: &Conversations,
        conversation: &str,
    ) -> Result<(), String> {
        let stored = store
            .load_state(conversation)
            .await
            .map_err(|error| error.to_string())?;
        let state = match stored {
            Some(stored) => serde_json::from_str(&stored).map_err(|error| error.to_string())?,
            None => Default::default(),
        };
        self.states
            .replace(conversation, state)
            .map_err(|error| error.to_string())
    }
}

/// A conversation's turn under way: while it lives, no other turn of that conversation
/// starts (they would both append to one history).
struct RunningTurn<'a> {
    running: &'a std::sync::Mutex<std::collections::HashSet<String>>,
    conversation: String,
}

impl<'a> RunningTurn<'a> {
    fn start(
        running: &'a std::sync::Mutex<std::collections::HashSet<String>>,
        conversation: &str,
    ) -> Option<Self> {
        let started = running
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(conversation.to_owned());
        started.then(|| Self {
            running,
            conversation: conversation.to_owned(),
        })
    }
}

impl Drop for RunningTurn<'_> {
    fn drop(&mut self) {
        self.running
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .remove(&self.conversation);
    }
}

/// Sends the `done` event of `summary`'s turn.
fn done(events: &mut (dyn FnMut(TurnEvent) + Send), summary: TurnSummary) -> TurnSummary {
    events(TurnEvent::Done {
        stop: summary.stop.clone(),
        usage: summary.usage,
        cost_usd: summary.cost_usd,
        model_requests: summary.model_requests,
    });
    summary
}

/// The user message a resumed turn answers: the last one, when the conversation's last
/// step is unfinished (it ends with that message, or with tool results).
fn resumed_message(history: &[Message]) -> Option<&str> {
    if !matches!(
        history.last(),
        Some(Message::User { .. } | Message::Tool { .. })
    ) {
        return None;
    }
    history.iter().rev().find_map(|message| match message {
        Message::User { content } => Some(content.as_str()),
        _ => None,
    })
}

/// What a message, or a call in one, adds to a request's tokens beside its texts, at
/// most: the few tokens a chat template spends on roles and separators.
const FRAMING_BYTES: usize = 16;

/// The bytes of `message` a request carries, with its framing (provider fields sent back
/// verbatim included).
fn message_bytes(message: &Message) -> usize {
    let kept = |extra: &serde_json::Map<String, serde_json::Value>| {
        if extra.is_empty() {
            0
        } else {
            serde_json::to_string(extra).map_or(0, |text| text.len())
        }
    };
    FRAMING_BYTES
        + match message {
            Message::User { content } => content.len(),
            Message::Assistant {
                content,
                tool_calls,
                extra,
            } => {
                content.len()
                    + kept(extra)
                    + tool_calls
                        .iter()
                        .map(|call| {
                            call.id.len()
                                + call.name.len()
                                + call.arguments.len()
                                + kept(&call.extra)
                                + FRAMING_BYTES
                        })
                        .sum::<usize>()
            }
            Message::Tool {
                call_id,
                name,
                content,
                ..
            } => call_id.len() + name.len() + content.len(),
        }
}

/// Whether `message` is the model's, with a call whose id is `id`.
fn calls(message: &Message, id: &str) -> bool {
    matches!(message, Message::Assistant { tool_calls, .. } if tool_calls.iter().any(|call| call.id == id))
}

fn set_content(message: &mut Message, text: &str) {
    if let Message::Assistant { content, .. } = message {
        text.clone_into(content);
    }
}

/// One turn's fixed parts.
struct Run<'a> {
    engine: &'a Engine,
    turn: &'a Turn,
    config: &'a TurnConfig,
    provider: &'a dyn Provider,
    control: &'a TurnControl,
    deadline: Instant,
    store: Option<(&'a Conversations, &'a str)>,
    /// What its own model requests may spend.
    spend: RequestSpend,
}

impl Run<'_> {
    /// Why the actions staged for the turn's reply are not performed, if they are not:
    /// only a reply that exists, was kept, and every `response_generated` hook passed, in
    /// a turn still wanted and within its deadline, performs them.
    fn why_not_perform(&self, stop: &Stop, outcome: &TurnOutcome, kept: bool) -> Option<String> {
        let reason = match stop {
            Stop::Replaced { hook } => format!("the reply was replaced by the hook `{hook}`"),
            Stop::FailedClosed { hook } => {
                format!("the hook `{hook}` failed closed and withheld the reply")
            }
            Stop::Answered | Stop::Limit { .. } => {
                if let Some(hook) = &outcome.regeneration_refused {
                    format!("the hook `{hook}` did not pass the reply (it asked for a regeneration past the cap)")
                } else if outcome.reply.trim().is_empty() {
                    "the turn ended without a reply".into()
                } else if !kept {
                    "the reply could not be stored".into()
                } else if self.control.cancel.is_cancelled() {
                    "the turn was cancelled before its actions were performed".into()
                } else if Instant::now() >= self.deadline {
                    "the turn's deadline passed before its actions were performed".into()
                } else {
                    return None;
                }
            }
            _ => "the reply was not kept".into(),
        };
        Some(reason)
    }

    /// How long one tool call, or one action's perform, may take.
    fn tool_timeout(&self) -> Duration {
        self.config.tool_timeout_ms.map_or(
            self.engine.registry.limits.default_timeout,
            Duration::from_millis,
        )
    }

    /// Whether the reply's text goes out as it is generated.
    fn streams(&self) -> bool {
        !self.turn.agent.hooks_mutate_responses()
    }

    /// Asks the model until it answers in words: one generation of the turn.
    async fn generate(
        &self,
        progress: &mut Progress<'_>,
        injected: &[String],
        stream: bool,
    ) -> Result<String, Interrupted> {
        // A regeneration replays a reply that staged actions: they go with it, and their
        // answers say so, so that the new reply stages what it needs afresh.
        if !progress.actions.is_empty() {
            let reason = "the reply was regenerated; call it again if the new reply needs it";
            actions::drop_staged(progress, self.store, reason).await;
        }
        let system: Vec<String> = self
            .config
            .system
            .iter()
            .cloned()
            .chain(injected.iter().cloned())
            .collect();
        // A regeneration asks again for the last answer: it leaves the history, with the
        // answers to the calls it made past a limit (never run). Nothing of it is stored
        // yet: a reply is stored once the hooks have passed it.
        if let Some(at) = progress.answer_at.take() {
            if at >= progress.stored {
                progress.history.truncate(at);
            }
        }
        loop {
            if self.control.cancel.is_cancelled() || self.control.stop_after_step.is_cancelled() {
                return Err(Interrupted::Cancelled);
            }
            // Each request offers what is installed as it is sent, and its answer's calls
            // reach only that.
            let offer = self.turn.agent.offer(
                self.provider.wire().format(),
                self.turn.locale().unwrap_or("en-US"),
            );
            let worst = self.worst_case_usage(&system, &progress.history, &offer.catalog);
            let worst_usd = self.provider.cost_usd(worst);
            let limit = self.limit_reached(progress, worst_usd);
            if limit.is_some() {
                progress.limit = limit;
            }
            // Reserved before it is sent; dropped unsettled (the request was cut, failed
            // or gave no usage), the worst case stays charged.
            let reservation = self
                .spend
                .reserve(worst_usd)
                .await
                .map_err(|refused| Interrupted::Spend(refused.to_string()))?;
            let request = ProviderRequest {
                system: &system,
                history: &progress.history,
                tools: std::str::from_utf8(&offer.catalog).unwrap_or("[]"),
                allow_tools: limit.is_none(),
                max_output_tokens: self.config.max_output_tokens,
            };
            let events = &mut *progress.events;
            let mut on_text = |text: &str| {
                if stream {
                    events(TurnEvent::Chat {
                        text: text.to_owned(),
                    });
                }
            };
            // Counted once sent: a request cut short may still have been billed.
            progress.model_requests += 1;
            let answer = tokio::select! {
                answer = self.provider.respond(request, &mut on_text) => answer,
                () = tokio::time::sleep_until(self.deadline) => return Err(Interrupted::Deadline),
                () = self.control.cancel.cancelled() => return Err(Interrupted::Cancelled),
            };
            let mut reply = answer.map_err(Interrupted::Provider)?;
            // What a reply did not report (no usage, or only its input) is charged at its
            // worst, here and in what the turn says it cost: it may have cost that much.
            let charged = Usage {
                input_tokens: match reply.usage.input_tokens {
                    0 => worst.input_tokens,
                    reported => reported,
                },
                output_tokens: match reply.usage.output_tokens {
                    0 => worst.output_tokens,
                    reported => reported,
                },
            };
            let cost_usd = self.provider.cost_usd(charged);
            reservation.settle(cost_usd).await;
            let earlier = &progress.history[progress.turn_start..];
            for at in 0..reply.tool_calls.len() {
                let (before, rest) = reply.tool_calls.split_at_mut(at);
                let call = &mut rest[0];
                while before.iter().any(|other| other.id == call.id)
                    || earlier.iter().any(|message| calls(message, &call.id))
                {
                    call.id = format!("{}_{}_{at}", call.id, progress.model_requests);
                }
            }
            progress.usage += reply.usage;
            progress.cost_usd += cost_usd;
            let wire = self.provider.wire().as_str();
            let calls = reply.tool_calls.clone();
            let text = reply.text.clone();
            progress.history.push(reply.into_message(wire));
            if calls.is_empty() {
                progress.answer_at = Some(progress.history.len() - 1);
                if !progress.called_tools {
                    // The limit took nothing from a model that wanted no tool.
                    progress.limit = None;
                }
                return Ok(text);
            }
            progress.called_tools = true;
            if limit.is_some() {
                // Asked to answer without tools, the model called some anyway: each is
                // answered, and its words are the reply.
                progress.answer_at = Some(progress.history.len() - 1);
                for call in &calls {
                    let why = "not run: the turn reached a limit";
                    let (answer, events) = unrun(
                        self.engine,
                        self.turn,
                        &offer,
                        call,
                        ToolStatus::Skipped,
                        why,
                    );
                    for event in events {
                        (progress.events)(event);
                    }
                    progress.history.push(answer);
                }
                // Not stored here: the `response_generated` hooks have yet to pass the
                // reply, and what is stored is what they leave of it.
                return Ok(text);
            }
            let base = progress.history.len();
            let answers = run_calls(
                self.engine,
                self.turn,
                &offer,
                &calls,
                base,
                &mut progress.counts,
                &mut progress.actions,
                StepLimits {
                    max_calls: self.config.max_tool_calls,
                    max_parallel: self.config.max_parallel_tools as usize,
                    max_identical: self.config.max_identical_calls,
                    max_actions: self.config.max_actions_per_turn,
                    tool_timeout: self.tool_timeout(),
                    deadline: self.deadline,
                    cancel: &self.control.cancel,
                },
                &mut *progress.events,
            )
            .await;
            progress.history.extend(answers);
            if !self.flush(progress).await {
                return Err(Interrupted::Store(
                    "the conversation could not be stored".into(),
                ));
            }
            if self.control.cancel.is_cancelled() || self.control.stop_after_step.is_cancelled() {
                return Err(Interrupted::Cancelled);
            }
            if Instant::now() >= self.deadline {
                return Err(Interrupted::Deadline);
            }
        }
    }

    /// The limit that makes the next request, whose worst case is `worst_usd`, the last,
    /// if one is reached.
    fn limit_reached(&self, progress: &Progress<'_>, worst_usd: f64) -> Option<Limit> {
        if progress.model_requests + 1 >= self.config.max_model_requests {
            Some(Limit::ModelRequests)
        } else if progress.counts.run >= self.config.max_tool_calls {
            Some(Limit::ToolCalls)
        } else if self
            .config
            .max_tokens
            .is_some_and(|cap| progress.usage.input_tokens + progress.usage.output_tokens >= cap)
        {
            Some(Limit::Tokens)
        } else if self.spend.room_usd() < 2.0 * worst_usd {
            // No room for one more after this one: this one answers.
            Some(Limit::Spend)
        } else {
            None
        }
    }

    /// What a request of `history` under `system` offering `tools` may use at most: its
    /// input's bytes as tokens (no token is shorter than a byte), plus a few per message
    /// for the wire's framing, and `max_output_tokens` out.
    fn worst_case_usage(&self, system: &[String], history: &[Message], tools: &[u8]) -> Usage {
        let bytes = system
            .iter()
            .map(|text| text.len() + FRAMING_BYTES)
            .sum::<usize>()
            + tools.len()
            + history.iter().map(message_bytes).sum::<usize>();
        Usage {
            input_tokens: bytes as u64,
            output_tokens: u64::from(self.config.max_output_tokens),
        }
    }

    /// Stores the messages not stored yet, as one step; `false` if the store failed.
    async fn flush(&self, progress: &mut Progress<'_>) -> bool {
        let Some((store, id)) = self.store else {
            return true;
        };
        let Some(lease) = progress.lease.as_mut() else {
            tracing::error!(
                conversation = id,
                "a step could not be stored: the turn holds no lease"
            );
            return false;
        };
        let new = &progress.history[progress.stored..];
        if new.is_empty() {
            return true;
        }
        if progress.unclaimed {
            if let Some(subscriber) = self.turn.subscriber() {
                if let Err(error) = store.claim(id, self.turn.agent(), subscriber).await {
                    tracing::error!(conversation = id, %error, "the conversation could not be claimed");
                    return false;
                }
            }
            progress.unclaimed = false;
        }
        match store.append(lease, progress.stored, new).await {
            Ok(()) => {
                progress.stored = progress.history.len();
                true
            }
            Err(error) => {
                tracing::error!(conversation = id, %error, "a step could not be stored");
                false
            }
        }
    }
}
