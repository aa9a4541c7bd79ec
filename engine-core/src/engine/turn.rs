//! A turn of an agent: whose it is, and the hook pipeline around its model calls
//! (pre-model hooks, the model, the `response_generated` passes with their
//! regenerations, `response_sent`).

use std::future::Future;
use std::sync::Arc;

use plugin_sdk::hook::{self, ConversationStart, MessageReceived, ResponseGenerated, ResponseSent};

use super::{Agent, Engine, EngineId};
use crate::hooks::{Hook, PreModel, ResponsePass, Written};
use crate::model::{Meter, SharedWindow, TurnSpend};

/// One turn of an agent, for whom and in which conversation: its calls share the turn's
/// model spend and see the conversation's state and artifacts.
///
/// [`Engine::turn`] gives a turn outside any conversation (an MCP session, the command
/// line), which is offered only the tools that need none;
/// [`in_conversation`](Self::in_conversation) puts it in one.
#[derive(Debug)]
pub struct Turn {
    /// The engine that made it: its agent equips that engine's tools.
    pub(super) engine: EngineId,
    /// The agent, as configured when the turn was made (a reload does not change it).
    pub(super) agent: Arc<Agent>,
    pub(super) conversation: Option<InConversation>,
    pub(super) locale: Option<String>,
    pub(super) spend: Arc<TurnSpend>,
}

/// Who a turn is for, and which conversation.
#[derive(Clone, Debug)]
pub(super) struct InConversation {
    pub(super) subscriber: String,
    pub(super) conversation: String,
}

impl Turn {
    /// The same turn, for `subscriber` in `conversation` (the engine's ids for them).
    pub fn in_conversation(
        mut self,
        subscriber: impl Into<String>,
        conversation: impl Into<String>,
    ) -> Self {
        self.conversation = Some(InConversation {
            subscriber: subscriber.into(),
            conversation: conversation.into(),
        });
        self
    }

    /// The same turn, for a reader of `locale` (a BCP 47 tag).
    pub fn with_locale(mut self, locale: impl Into<String>) -> Self {
        self.locale = Some(locale.into());
        self
    }

    /// The agent's name.
    pub fn agent(&self) -> &str {
        self.agent.name()
    }

    /// The agent's configuration, as it was when the turn was made.
    pub fn agent_config(&self) -> &crate::config::AgentConfig {
        self.agent.config()
    }

    /// The end user the turn is for, in a conversation.
    pub fn subscriber(&self) -> Option<&str> {
        self.conversation.as_ref().map(|at| at.subscriber.as_str())
    }

    /// The conversation's id, in a conversation.
    pub fn conversation(&self) -> Option<&str> {
        self.conversation
            .as_ref()
            .map(|at| at.conversation.as_str())
    }

    /// The locale of the person the turn is for, if known.
    pub fn locale(&self) -> Option<&str> {
        self.locale.as_deref()
    }

    /// The model calls of the turn's tools and what they cost.
    pub fn spend(&self) -> &TurnSpend {
        &self.spend
    }

    /// The turn as hooks see it.
    fn for_hooks(&self) -> hook::Turn {
        let turn = hook::Turn::new(self.conversation().unwrap_or_default());
        match &self.locale {
            Some(locale) => turn.with_locale(locale.clone()),
            None => turn,
        }
    }
}

/// No agent has that name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("there is no agent `{name}`; the configured agents are: {}", known.join(", "))]
pub struct UnknownAgent {
    /// The name asked for.
    pub name: String,
    /// The agents there are.
    pub known: Vec<String>,
}

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

impl Engine {
    /// A turn of `agent` outside any conversation and any session; see
    /// [`Turn::in_conversation`] and [`Engine::session`].
    pub fn turn(&self, agent: &str) -> Result<Turn, UnknownAgent> {
        let agent = self.known_agent(agent)?;
        Ok(self.new_turn(agent, None))
    }

    /// The agent called `name`, as configured now.
    pub(super) fn known_agent(&self, name: &str) -> Result<Arc<Agent>, UnknownAgent> {
        let configured = self.configured.load();
        configured.agent(name).cloned().ok_or_else(|| UnknownAgent {
            name: name.to_owned(),
            known: configured
                .agents
                .iter()
                .map(|known| known.name().to_owned())
                .collect(),
        })
    }

    /// A turn of `agent`, within `session`'s spend if it has one: the turn's model calls
    /// count against the turn's cap, the session's and the agent's window.
    pub(super) fn new_turn(&self, agent: Arc<Agent>, session: Option<Arc<Meter>>) -> Turn {
        let cap = agent
            .config()
            .model
            .map_or(0.0, |grant| grant.spend_cap_usd);
        let shared = session
            .into_iter()
            .chain(agent.spend_window().cloned())
            .collect();
        let window = agent
            .config()
            .model
            .zip(self.spend_ledger.as_ref())
            .map(|(grant, ledger)| SharedWindow {
                ledger: Arc::clone(ledger),
                agent: agent.name().to_owned(),
                cap_usd: grant.window().cap_usd,
                secs: grant.window().secs,
            });
        Turn {
            engine: self.id,
            agent,
            conversation: None,
            locale: None,
            spend: Arc::new(TurnSpend::new(cap, shared, window)),
        }
    }

    /// Runs the hooks of one turn of `turn`'s conversation for the user's `message` through the hooks,
    /// asking `generate` (the engine's model call) for each reply. `first` marks the
    /// conversation's first turn, which runs `conversation_start` hooks.
    ///
    /// Rules: the first halt ends the turn before the model; injected context reaches
    /// every generation of the turn; after each reply, one pass of `response_generated`
    /// hooks decides, and a regeneration beats a replacement. A failed hook that declares
    /// `fail_closed` ends the turn with its text, wherever it runs. Replays stop at
    /// [`Limits::max_regenerations`](crate::Limits::max_regenerations): a regeneration asked for past it is
    /// refused (logged), and the pass's replacement, if any, else the last reply, is sent.
    ///
    /// An error from `generate` ends the turn with that error. Once the reply is
    /// delivered, call [`Engine::response_sent`].
    pub async fn run_turn<G, F, E>(
        &self,
        turn: &Turn,
        message: &str,
        first: bool,
        generate: G,
    ) -> Result<TurnOutcome, E>
    where
        G: FnMut(ModelInput) -> F,
        F: Future<Output = Result<String, E>>,
    {
        self.run_turn_within(turn, message, first, generate, &|| true)
            .await
    }

    /// [`run_turn`](Self::run_turn), whose regenerations `generate` may have no request
    /// left for: a regeneration is asked for only while `may_regenerate` says so, and
    /// one asked for past it is refused as one past the cap is.
    pub(super) async fn run_turn_within<G, F, E>(
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
        let hooks = turn.agent.hook_pipeline();
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

    /// Runs the `response_sent` hooks of `turn`, once `response` to `message` is out.
    pub async fn response_sent(&self, turn: &Turn, message: &str, response: &str) {
        let sent = ResponseSent::new(turn.for_hooks(), message, response);
        let runs = |hook: &Hook, pending: &Written| self.hook_run(turn, hook, pending);
        turn.agent
            .hook_pipeline()
            .response_sent(Arc::new(sent), &runs)
            .await;
    }
}
