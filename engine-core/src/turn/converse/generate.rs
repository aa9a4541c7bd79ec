//! Asking the model: one generation of a turn (requests, streamed replies, the tools it
//! calls, until it answers in words or a limit stops it), each step stored as it ends.

use std::time::Duration;

use tokio::time::Instant;

use super::tools::{run_calls, unrun, StepLimits};
use super::{actions, Interrupted, Progress, TurnControl, TurnEvent};
use crate::config::TurnConfig;
use crate::conversation::{Message, ToolStatus};
use crate::model::RequestSpend;
use crate::outcome::{Limit, Stop};
use crate::provider::{request_bytes, Provider, ProviderRequest, Usage};
use crate::stores::Conversations;
use crate::turn::history::StepHistory;
use crate::turn::{Runtime, Turn, TurnOutcome};

/// Whether `message` is the model's, with a call whose id is `id`.
fn calls(message: &Message, id: &str) -> bool {
    matches!(message, Message::Assistant { tool_calls, .. } if tool_calls.iter().any(|call| call.id == id))
}

pub(super) fn set_content(message: &mut Message, text: &str) {
    if let Message::Assistant { content, .. } = message {
        text.clone_into(content);
    }
}

/// One turn's fixed parts.
pub(super) struct Run<'a> {
    pub(super) runtime: &'a Runtime,
    pub(super) turn: &'a Turn,
    pub(super) config: &'a TurnConfig,
    pub(super) provider: &'a dyn Provider,
    pub(super) control: &'a TurnControl,
    pub(super) deadline: Instant,
    pub(super) store: Option<(&'a Conversations, &'a str)>,
    /// What its own model requests may spend.
    pub(super) spend: RequestSpend,
}

impl Run<'_> {
    /// Why the actions staged for the turn's reply are not performed, if they are not:
    /// only a reply that exists, was kept, and every `response_generated` hook passed, in
    /// a turn still wanted and within its deadline, performs them.
    pub(super) fn why_not_perform(
        &self,
        stop: &Stop,
        outcome: &TurnOutcome,
        kept: bool,
    ) -> Option<String> {
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
    pub(super) fn tool_timeout(&self) -> Duration {
        self.config.tool_timeout_ms.map_or(
            self.runtime.registry.limits.default_timeout,
            Duration::from_millis,
        )
    }

    /// Asks the model until it answers in words: one generation of the turn.
    pub(super) async fn generate(
        &self,
        progress: &mut Progress<'_, '_>,
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
        // Made once for every request of the generation: the timer is registered, and
        // the cancellation listened to, at the first request, not at each.
        let deadline = tokio::time::sleep_until(self.deadline);
        let cancelled = self.control.cancel.cancelled();
        tokio::pin!(deadline, cancelled);
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
                // In this order: a reply that keeps arriving cannot put off either end.
                biased;
                () = &mut cancelled => return Err(Interrupted::Cancelled),
                () = &mut deadline => return Err(Interrupted::Deadline),
                answer = self.provider.respond(request, &mut on_text) => answer,
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
                        self.runtime,
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
            let answers = run_calls(
                self.runtime,
                self.turn,
                &offer,
                &calls,
                &StepHistory::new(&progress.history),
                &mut progress.counts,
                &mut progress.actions,
                StepLimits {
                    max_calls: self.config.max_tool_calls,
                    max_parallel: self.config.max_parallel_tools as usize,
                    max_identical: self.config.max_identical_calls,
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
    fn limit_reached(&self, progress: &Progress<'_, '_>, worst_usd: f64) -> Option<Limit> {
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
        Usage {
            input_tokens: request_bytes(system, history, tools) as u64,
            output_tokens: u64::from(self.config.max_output_tokens),
        }
    }

    /// Stores the messages not stored yet, as one step; `false` if the store failed.
    pub(super) async fn flush(&self, progress: &mut Progress<'_, '_>) -> bool {
        let Some((store, id)) = self.store else {
            return true;
        };
        let Some(held) = progress.held.as_mut() else {
            tracing::error!(
                conversation = id,
                "a step could not be stored: the turn does not hold its conversation"
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
        match store.append(held.lease(), progress.stored, new).await {
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
