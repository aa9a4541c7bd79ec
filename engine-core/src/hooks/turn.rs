//! One turn through the hook pipeline: pre-model hooks, the model, and the
//! `response_generated` passes with their regenerations.

use std::future::Future;
use std::sync::Arc;

use plugin_sdk::hook::{ConversationStart, MessageReceived, ResponseGenerated, Turn};

use super::pipeline::{PreModel, ResponsePass};
use crate::Registry;

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
}

impl Registry {
    /// Runs one turn of `turn`'s conversation for the user's `message` through the hooks,
    /// asking `generate` (the engine's model call) for each reply. `first` marks the
    /// conversation's first turn, which runs `conversation_start` hooks.
    ///
    /// Rules: the first halt ends the turn before the model; injected context reaches
    /// every generation of the turn; after each reply, one pass of `response_generated`
    /// hooks decides, and a regeneration beats a replacement. Replays stop at
    /// [`Limits::max_regenerations`](crate::Limits): a regeneration asked for past it is
    /// refused (logged), and the pass's replacement, if any, else the last reply, is sent.
    ///
    /// An error from `generate` ends the turn with that error. Once the reply is
    /// delivered, run [`Hooks::response_sent`](crate::Hooks::response_sent).
    pub async fn run_turn<G, F, E>(
        &self,
        turn: &Turn,
        message: &str,
        first: bool,
        mut generate: G,
    ) -> Result<TurnOutcome, E>
    where
        G: FnMut(ModelInput) -> F,
        F: Future<Output = Result<String, E>>,
    {
        let start = first.then(|| Arc::new(ConversationStart::new(turn.clone(), message)));
        let received = Arc::new(MessageReceived::new(turn.clone(), message));
        let injected = match self.hooks.before_model(start, received).await {
            PreModel::Halt(halt) => {
                return Ok(TurnOutcome {
                    reply: halt.message,
                    persist: halt.persist,
                    end: TurnEnd::Halted { hook: halt.hook },
                    injected: Vec::new(),
                    regenerations: 0,
                })
            }
            PreModel::Proceed { injected } => injected,
        };
        let stream = !self.hooks.mutate_responses();
        let mut regeneration = 0;
        loop {
            let reply = generate(ModelInput {
                injected_context: injected.clone(),
                regeneration,
                stream,
            })
            .await?;
            let generated = ResponseGenerated::new(turn.clone(), message, reply, regeneration);
            let generated = Arc::new(generated);
            let ResponsePass {
                regenerate,
                replace,
            } = self.hooks.response_generated(Arc::clone(&generated)).await;
            if let Some(asked) = regenerate {
                if regeneration < self.limits.max_regenerations {
                    tracing::info!(
                        hook = asked.hook,
                        reason = asked.reason,
                        regeneration,
                        "a hook asked to regenerate the reply"
                    );
                    regeneration += 1;
                    continue;
                }
                tracing::warn!(
                    hook = asked.hook,
                    cap = self.limits.max_regenerations,
                    "regeneration refused: the turn reached the cap"
                );
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
            });
        }
    }
}
