//! Each event's hooks, run in order and their outcomes folded into one decision.

use std::sync::Arc;

use plugin_dev_wire::WireEvent;
use plugin_sdk::engine::{HookEntry, StateWrites};
use plugin_sdk::hook::{
    ConversationStart, MessageReceived, PreModelOutcome, ResponseGenerated, ResponseOutcome,
    ResponseSent,
};

use super::run::{run, Failed};
use super::{Hook, HookRuns, Hooks, Written};

/// What the hooks before the model decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum PreModel {
    /// Ask the model, with these system messages added for this turn, in hook order.
    Proceed {
        /// The injected context, one system message per injection.
        injected: Vec<String>,
    },
    /// Skip the model and reply with the halt's message.
    Halt(Halt),
}

/// A hook's decision to end the turn before the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Halt {
    /// The hook that halted.
    pub(crate) hook: String,
    /// The reply.
    pub(crate) message: String,
    /// `false`: the exchange leaves no trace (no message rows, no state flush).
    pub(crate) persist: bool,
    /// The hook failed and declares `fail_closed`: it did not decide, its failure did.
    pub(crate) failed_closed: bool,
}

/// What one pass of `response_generated` hooks decided about one reply.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ResponsePass {
    /// The first regeneration asked for, in hook order. It beats a replacement.
    pub(crate) regenerate: Option<Regeneration>,
    /// The first replacement offered, in hook order.
    pub(crate) replace: Option<Replacement>,
    /// The `fail_closed` reply of a hook that failed: it beats both, since the reply
    /// was not vetted, and ends the pass.
    pub(crate) failed_closed: Option<Replacement>,
}

/// A hook's request to replay the turn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Regeneration {
    /// The hook that asked.
    pub(crate) hook: String,
    /// Why, as the hook said.
    pub(crate) reason: Option<String>,
}

/// A hook's replacement for the reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Replacement {
    /// The hook that replaced.
    pub(crate) hook: String,
    /// The reply to send instead.
    pub(crate) message: String,
}

impl Hooks {
    /// Runs `conversation_start` hooks (when `start` is given: the conversation's first
    /// turn) and then `message_received` hooks. The first halt ends the run: no later
    /// hook of either event runs. Injections accumulate in the order their hooks ran.
    /// A hook that fails and declares `fail_closed` halts with its reply, leaving no
    /// trace: the message it did not vet stays out of the history.
    ///
    /// Each hook runs in the context `runs` builds for it; the state the hooks wrote is
    /// answered beside the decision, for the turn to keep if it is stored.
    pub(crate) async fn before_model(
        &self,
        start: Option<Arc<ConversationStart>>,
        message: Arc<MessageReceived>,
        runs: HookRuns<'_>,
    ) -> (PreModel, Written) {
        let mut injected = Vec::new();
        let mut written = Written::new();
        // Borrowed: resolved into a reply only when a guard fails closed.
        let locale = message.turn().locale();
        if let Some(start) = start {
            let halt = self
                .pre_model(&start, locale, runs, &mut injected, &mut written)
                .await;
            if let Some(halt) = halt {
                return (PreModel::Halt(halt), written);
            }
        }
        let halt = self
            .pre_model(&message, locale, runs, &mut injected, &mut written)
            .await;
        match halt {
            Some(halt) => (PreModel::Halt(halt), written),
            None => (PreModel::Proceed { injected }, written),
        }
    }

    /// One pre-model event's hooks: the first halt, or none with the injections added.
    async fn pre_model<E: WireEvent<Outcome = PreModelOutcome>>(
        &self,
        payload: &Arc<E>,
        locale: Option<&str>,
        runs: HookRuns<'_>,
        injected: &mut Vec<String>,
        written: &mut Written,
    ) -> Option<Halt> {
        for (hook, entry) in self.entries::<E>() {
            let halt = |message, persist, failed_closed| Halt {
                hook: hook.id().to_owned(),
                message,
                persist,
                failed_closed,
            };
            let Some(run_in) = runs(hook, written) else {
                continue;
            };
            let outcome = match run(hook, entry, payload, run_in).await {
                Ok((outcome, writes)) => {
                    keep(written, hook, writes);
                    Ok(outcome)
                }
                Err(failed) => Err(failed),
            };
            match outcome {
                Ok(PreModelOutcome::Halt { message, persist }) => {
                    return Some(halt(message, persist, false))
                }
                Ok(PreModelOutcome::InjectContext(text)) => injected.push(text),
                Ok(PreModelOutcome::Observe) => {}
                Err(Failed) => {
                    if let Some(reply) = hook.fail_closed(locale) {
                        return Some(halt(reply, false, true));
                    }
                }
            }
        }
        None
    }

    /// Runs every `response_generated` hook on one reply. Each sees the reply as the
    /// model wrote it; a mutation from a hook not declared `mutates_response` (possible
    /// only for a descriptor written by hand) is logged and ignored. A hook that fails
    /// and declares `fail_closed` ends the pass with its reply.
    pub(crate) async fn response_generated(
        &self,
        payload: Arc<ResponseGenerated>,
        runs: HookRuns<'_>,
    ) -> (ResponsePass, Written) {
        let mut pass = ResponsePass::default();
        let mut written = Written::new();
        let locale = payload.turn().locale();
        for (hook, entry) in self.entries::<ResponseGenerated>() {
            let Some(run_in) = runs(hook, &written) else {
                continue;
            };
            let outcome = match run(hook, entry, &payload, run_in).await {
                Ok((outcome, writes)) => {
                    keep(&mut written, hook, writes);
                    Some(outcome)
                }
                Err(Failed) => match hook.fail_closed(locale) {
                    // Start-up refuses `fail_closed` without `mutates_response` here.
                    Some(message) => {
                        pass.failed_closed = Some(Replacement {
                            hook: hook.id().to_owned(),
                            message,
                        });
                        break;
                    }
                    None => None,
                },
            };
            if !matches!(outcome, None | Some(ResponseOutcome::Observe))
                && !hook.descriptor.mutates_response
            {
                tracing::warn!(
                    hook = hook.id(),
                    "a hook not declared `mutates_response` tried to change the reply; ignored"
                );
                continue;
            }
            match outcome {
                Some(ResponseOutcome::Regenerate { reason }) => {
                    pass.regenerate.get_or_insert(Regeneration {
                        hook: hook.id().to_owned(),
                        reason,
                    });
                }
                Some(ResponseOutcome::ReplaceResponse { message }) => {
                    pass.replace.get_or_insert(Replacement {
                        hook: hook.id().to_owned(),
                        message,
                    });
                }
                Some(ResponseOutcome::Observe) | None => {}
            }
        }
        (pass, written)
    }

    /// Runs every `response_sent` hook: they observe the reply as sent.
    /// They take no state (the turn is stored), so they write none.
    pub(crate) async fn response_sent(&self, payload: Arc<ResponseSent>, runs: HookRuns<'_>) {
        for (hook, entry) in self.entries::<ResponseSent>() {
            // A failure was logged; there is nothing left to close.
            if let Some(run_in) = runs(hook, &Written::new()) {
                let _ = run(hook, entry, &payload, run_in).await;
            }
        }
    }

    /// The hooks of `E`'s event with their entries, in order.
    fn entries<E: WireEvent>(&self) -> impl Iterator<Item = (&Hook, HookEntry<E>)> {
        self.of(E::EVENT)
            .iter()
            .filter_map(|hook| E::entry(&hook.descriptor.handler).map(|entry| (hook, entry)))
    }
}

/// Notes what `hook` wrote, if anything: most hooks write nothing, and their runs then
/// allocate nothing here.
fn keep(written: &mut Written, hook: &Hook, writes: StateWrites) {
    if !writes.is_empty() {
        written.push((hook.id().to_owned(), writes));
    }
}
