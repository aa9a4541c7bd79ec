//! The agent turn: the model is asked, the tools it calls run, their results go back,
//! until it answers or a limit, the deadline or a cancellation ends the turn. Hooks run
//! around it (the pipeline of [`Engine::run_turn`](crate::Engine::run_turn)); the conversation is stored step by
//! step, so that every tool call in it has its answer.

mod actions;
mod events;
mod generate;
mod held;
mod kept_call;
mod state;
mod tools;

use std::sync::Arc;
use std::time::Duration;

use plugin_sdk::engine::RedactValues;
use tokio::sync::Mutex;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

pub use events::TurnEvent;

use super::attachments::{self, AttachmentError};
use super::{Runtime, Turn, TurnEnd};
use crate::conversation::Message;
use crate::model::{RequestSpend, SharedWindow};
use crate::outcome::{Limit, Stop, TurnSummary};
use crate::provider::{Provider, ProviderError, Usage};
use crate::stores::Conversations;
use actions::StagedActions;
use generate::{set_content, Run};
use held::{Held, NotHeld};
use tools::CallCounts;

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
struct Progress<'a, 'h> {
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
    held: Option<Held<'h>>,
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

impl Runtime {
    /// The turn loop of [`Engine::converse`](crate::Engine::converse), whose events and
    /// summary leave redacted by `redact`.
    pub(crate) async fn converse(
        &self,
        turn: &Turn,
        dropped_in: Option<Arc<dyn Provider>>,
        message: Option<&str>,
        control: &TurnControl,
        events: &mut (dyn FnMut(TurnEvent) + Send),
        redact: &RedactValues,
    ) -> TurnSummary {
        // What leaves a turn, leaves redacted: its events here, the summary it stores and
        // answers where each is made (`failed` below, and at the end).
        let mut redacting = |event: TurnEvent| events(event.redacted(redact));
        let events: &mut (dyn FnMut(TurnEvent) + Send) = &mut redacting;
        let failed = |events: &mut (dyn FnMut(TurnEvent) + Send), message: String| {
            let summary = TurnSummary::failed(message).redacted(redact);
            if let Stop::Failed { message } = &summary.stop {
                events(TurnEvent::Error {
                    message: message.clone(),
                });
            }
            done(events, summary)
        };
        let agent = self.agent_of(turn);
        let Some(config) = agent.config().turn.as_ref() else {
            return failed(
                events,
                format!("the agent `{}` has no `turn` configuration", agent.name()),
            );
        };
        // Its configured provider, else the one a drop-in file gives it now.
        let Some(provider) = agent.provider().cloned().or(dropped_in) else {
            return failed(
                events,
                format!(
                    "the agent `{}` runs turns on the provider `{}`, which is not configured and which no file of the providers directory offers now (its file was removed, or is refused: see `/v1/extensions`)",
                    agent.name(),
                    config.provider
                ),
            );
        };
        let conversations = self.conversations.load_full();
        let store = turn.conversation().map(|id| (conversations.as_ref(), id));
        let held = match store {
            Some((store, id)) => match Held::begin(&self.running, store, id).await {
                Ok(held) => Some(held),
                Err(NotHeld::Busy(where_)) => {
                    let message = format!(
                        "a turn of the conversation `{id}` is under way{where_}: send this one again once it ends"
                    );
                    return done(events, TurnSummary::stopped(Stop::Busy { message }));
                }
                Err(NotHeld::Failed(error)) => {
                    return failed(
                        events,
                        format!("the conversation could not be begun: {error}"),
                    )
                }
            },
            None => None,
        };
        // A turn that cannot go on from here lets go of its conversation, recording
        // nothing: it did nothing.
        let opened = match self.open(turn, store, message, control).await {
            Ok(opened) => opened,
            Err(message) => {
                if let Some(held) = held {
                    held.let_go().await;
                }
                return failed(events, message);
            }
        };
        let Opened {
            history,
            stored,
            unclaimed,
            first,
            user_text,
        } = opened;
        let progress = Mutex::new(Progress {
            history,
            stored,
            answer_at: None,
            called_tools: false,
            counts: CallCounts::default(),
            actions: StagedActions::new(config.max_actions_per_turn),
            held,
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
            runtime: self,
            turn,
            config,
            provider: provider.as_ref(),
            control,
            deadline: Instant::now() + Duration::from_secs(config.deadline_secs),
            store,
            spend: RequestSpend::new(
                config.spend_cap_usd,
                agent.turn_window().cloned(),
                shared_window,
            ),
        };
        // A regeneration is one more model request: none past the turn's last.
        let may_regenerate = || {
            progress
                .try_lock()
                .is_ok_and(|progress| progress.model_requests < config.max_model_requests)
        };
        // Whether the reply streamed is the turn's own hooks' say, as the pipeline read
        // them at its start: a dev session opening or closing meanwhile changes neither.
        let streamed_out = std::sync::atomic::AtomicBool::new(false);
        let outcome = self
            .run_turn_within(
                turn,
                &user_text,
                first,
                |input| {
                    let progress = &progress;
                    let run = &run;
                    streamed_out.store(input.stream, std::sync::atomic::Ordering::Relaxed);
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
                let streamed = matches!(stop, Stop::Answered | Stop::Limit { .. })
                    && streamed_out.load(std::sync::atomic::Ordering::Relaxed);
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
            stop: stop.redacted(redact),
            reply,
            usage: progress.usage,
            cost_usd: progress.cost_usd,
            model_requests: progress.model_requests,
        };
        // The turn is stored and its conversation let go before `done` goes out: a client
        // that sends the next turn at once finds it free, on any replica. A halt that
        // asked for no trace keeps nothing: no record, no state.
        if let (Some(held), Some(id)) = (progress.held.take(), turn.conversation()) {
            let state = persist.then(|| {
                serde_json::to_string(&*self.states.snapshot(id)).expect("state serializes")
            });
            held.end_turn(state.map(|state| (&summary, state))).await;
        }
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

/// What a turn starts from, once its conversation is held.
struct Opened {
    history: Vec<Message>,
    /// How many messages of `history` are stored.
    stored: usize,
    /// Whether the conversation is no one's yet.
    unclaimed: bool,
    /// Whether this is the conversation's first user message.
    first: bool,
    /// The message the turn answers.
    user_text: String,
}

impl Runtime {
    /// Reads what `turn` starts from: its conversation's history and state, checked to
    /// be the subscriber's, with `message` (or, `None`, the one to resume) appended.
    /// `Err` says why it cannot go on; nothing was written.
    async fn open(
        &self,
        turn: &Turn,
        store: Option<(&Conversations, &str)>,
        message: Option<&str>,
        control: &TurnControl,
    ) -> Result<Opened, String> {
        // Another's conversation is refused before anything of it is read; one that is
        // no one's yet becomes the turn's when it stores its first message (`Run::flush`),
        // not before. Checked under the lease: no other turn can claim it meanwhile.
        let mut unclaimed = false;
        if let (Some((store, id)), Some(subscriber)) = (store, turn.subscriber()) {
            let owned = store
                .may_continue(id, turn.agent(), subscriber)
                .await
                .map_err(|error| error.to_string())?;
            unclaimed = !owned;
        }
        control.begun.cancel();
        let mut history = match store {
            Some((store, id)) => store
                .load(id)
                .await
                .map_err(|error| format!("the conversation could not be read: {error}"))?,
            None => Vec::new(),
        };
        if let Some((store, id)) = store {
            self.restore_state(store, id).await.map_err(|error| {
                format!("the conversation's state could not be restored: {error}")
            })?;
            // A session's action is known while its session serves it; its answers
            // left behind by a turn that stopped stay as they are after that.
            let is_action = |name: &str| {
                let linked = self
                    .registry
                    .tool_index(name)
                    .is_some_and(|index| self.registry.tools()[index].is_action());
                linked
                    || turn
                        .agent
                        .dev_tool(name)
                        .is_some_and(|tool| tool.is_action())
            };
            actions::settle_left_behind(&mut history, store, id, is_action).await;
        }
        let first = !history
            .iter()
            .any(|message| matches!(message, Message::User { .. }));
        let stored = history.len();
        let user_text = match message {
            Some(text) if turn.attachments.is_empty() => text.to_owned(),
            // Kept once the conversation is the turn's and its history read: a turn
            // refused before here keeps none.
            Some(text) => {
                let (_, id) = store.ok_or(AttachmentError::WithoutConversation.to_string())?;
                let handles =
                    attachments::keep(self.artifacts.as_ref(), id, &turn.attachments).await?;
                attachments::told(text, &turn.attachments, &handles)
            }
            None if !turn.attachments.is_empty() => {
                return Err(AttachmentError::WithoutMessage.to_string())
            }
            None => resumed_message(&history)
                .ok_or("nothing to resume: the conversation has no step left unfinished")?
                .to_owned(),
        };
        if message.is_some() {
            history.push(Message::user(&user_text));
        }
        Ok(Opened {
            history,
            stored,
            unclaimed,
            first,
            user_text,
        })
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
