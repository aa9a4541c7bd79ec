//! The hook pipeline around a turn's model calls: pre-model hooks, the model, the
//! `response_generated` passes with their regenerations, `response_sent`.

use std::future::Future;
use std::sync::Arc;

use plugin_sdk::hook::{ConversationStart, MessageReceived, ResponseGenerated, ResponseSent};

use super::{Runtime, Turn};
use crate::hooks::{Hook, PreModel, ResponsePass, Written};

/// What the engine asks its model for, once per generation of a turn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelInput {
    /// The system messages hooks injected for this turn, in the order they ran; they go
    /// after the agent's own system prompt and are not kept in the history.
    pub injected_context: Vec<String>,
    /// 0 for the first generation, then one more for each replay.
    pub regeneration: u32,
    /// Whether the reply may stream to the user as it is generated: `false` when a hook
    /// may replace or regenerate it, so that nothing reaches the user before the hooks.
    pub stream: bool,
}

/// How a turn's reply came about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TurnEnd {
    /// A pre-model hook halted the turn; the model was not asked.
    Halted {
        /// The hook that halted.
        hook: String,
    },
    /// The model's reply, as generated (after any regenerations).
    Generated,
    /// A hook's replacement for the model's reply.
    Replaced {
        /// The hook that replaced it.
        hook: String,
    },
    /// A hook declared `fail_closed` and failed (an error, a panic, its timeout, or a run
    /// of it still under way for another turn): its `fail_closed` text is the reply.
    /// Before the model, the model was not asked and the exchange leaves no trace; after
    /// it, the model's reply is withheld.
    FailedClosed {
        /// The hook that failed.
        hook: String,
    },
}

/// The result of a turn: what to send, and whether to keep it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TurnOutcome {
    /// The reply to send.
    pub reply: String,
    /// `false` when a halt asked for no trace: write no message rows and flush no state.
    pub persist: bool,
    /// How the reply came about.
    pub end: TurnEnd,
    /// The context hooks injected (empty when halted).
    pub injected: Vec<String>,
    /// How many times the turn was replayed.
    pub regenerations: u32,
    /// The hook that asked for one more regeneration past the cap, which was refused: it
    /// did not pass the reply that is sent (the turn's staged actions are dropped).
    pub regeneration_refused: Option<String>,
}

impl Runtime {
    /// [`run_turn`](Self::run_turn), whose regenerations `generate` may have no request
    /// left for: a regeneration is asked for only while `may_regenerate` says so, and
    /// one asked for past it is refused as one past the cap is.
    pub(crate) async fn run_turn_within<G, F, E>(
        &self,
        turn: &Turn,
        message: &str,
        first: bool,
        mut generate: G,
        may_regenerate: &(dyn Fn() -> bool + Sync),
    ) -> Result<TurnOutcome, E>
    where
        G: FnMut(ModelInput) -> F,
        F: Future<Output = Result<String, E>>,
    {
        let hooks = turn.agent.hooks_now();
        let seen = turn.for_hooks();
        let start = first.then(|| Arc::new(ConversationStart::new(seen.clone(), message)));
        let received = Arc::new(MessageReceived::new(seen.clone(), message));
        let runs = |hook: &Hook, pending: &Written| self.hook_run(turn, hook, pending);
        let (decision, written) = hooks.before_model(start, received, &runs).await;
        // A halt that leaves no trace keeps no state either.
        if !matches!(&decision, PreModel::Halt(halt) if !halt.persist) {
            self.keep_hook_state(turn, written);
        }
        let injected = match decision {
            PreModel::Halt(halt) => {
                let end = if halt.failed_closed {
                    TurnEnd::FailedClosed { hook: halt.hook }
                } else {
                    TurnEnd::Halted { hook: halt.hook }
                };
                return Ok(TurnOutcome {
                    reply: halt.message,
                    persist: halt.persist,
                    end,
                    injected: Vec::new(),
                    regenerations: 0,
                    regeneration_refused: None,
                });
            }
            PreModel::Proceed { injected } => injected,
        };
        let stream = !hooks.mutate_responses();
        let mut regeneration = 0;
        loop {
            let reply = generate(ModelInput {
                injected_context: injected.clone(),
                regeneration,
                stream,
            })
            .await?;
            let within_cap = regeneration < self.registry.limits.max_regenerations;
            let may_replay = within_cap && may_regenerate();
            let generated = ResponseGenerated::new(seen.clone(), message, reply, regeneration)
                .with_regeneration_left(may_replay);
            let generated = Arc::new(generated);
            let (pass, written) = hooks
                .response_generated(Arc::clone(&generated), &runs)
                .await;
            // What a pass wrote about a reply it has regenerated goes with that reply.
            if pass.regenerate.is_none() || pass.failed_closed.is_some() || !may_replay {
                self.keep_hook_state(turn, written);
            }
            let ResponsePass {
                regenerate,
                replace,
                failed_closed,
            } = pass;
            if let Some(failed) = failed_closed {
                return Ok(TurnOutcome {
                    reply: failed.message,
                    persist: true,
                    end: TurnEnd::FailedClosed { hook: failed.hook },
                    injected,
                    regenerations: regeneration,
                    regeneration_refused: None,
                });
            }
            let mut regeneration_refused = None;
            if let Some(asked) = regenerate {
                if may_replay {
                    tracing::info!(
                        hook = asked.hook,
                        reason = asked.reason,
                        regeneration,
                        "a hook asked to regenerate the reply"
                    );
                    regeneration += 1;
                    continue;
                }
                if within_cap {
                    tracing::warn!(
                        hook = asked.hook,
                        "regeneration refused: the turn made its last allowed model request"
                    );
                } else {
                    tracing::warn!(
                        hook = asked.hook,
                        cap = self.registry.limits.max_regenerations,
                        "regeneration refused: the turn reached the cap"
                    );
                }
                regeneration_refused = Some(asked.hook);
            }
            let (reply, end) = match replace {
                Some(replacement) => (
                    replacement.message,
                    TurnEnd::Replaced {
                        hook: replacement.hook,
                    },
                ),
                None => (generated.response().to_owned(), TurnEnd::Generated),
            };
            return Ok(TurnOutcome {
                reply,
                persist: true,
                end,
                injected,
                regenerations: regeneration,
                regeneration_refused,
            });
        }
    }

    /// The `response_sent` hooks of [`Engine::response_sent`](crate::Engine::response_sent).
    pub(crate) async fn response_sent(&self, turn: &Turn, message: &str, response: &str) {
        let sent = ResponseSent::new(turn.for_hooks(), message, response);
        let runs = |hook: &Hook, pending: &Written| self.hook_run(turn, hook, pending);
        turn.agent
            .hooks_now()
            .response_sent(Arc::new(sent), &runs)
            .await;
    }
}
