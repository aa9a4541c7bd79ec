//! A conversation held by one turn (or one kept call): in this process, so that no other
//! turn of it starts here, and in its store, so that none starts in another process or
//! replica. Every way out of a turn goes through [`Held`]: it is let go, ended with a
//! record, or ended after a call, each once, since each consumes it.

use std::collections::HashSet;
use std::sync::Mutex;

use crate::outcome::TurnSummary;
use crate::stores::{ConversationError, Conversations, TurnLease};

/// A conversation a turn holds. Dropped without [`let_go`](Self::let_go) or an end (a
/// future dropped mid-turn: a client that went away), the store's lease is dropped with
/// it: the backend lets go of the conversation and leaves the turn interrupted, for the
/// next turn to settle its actions under way as unknown.
pub(super) struct Held<'a> {
    store: &'a Conversations,
    /// Dropped before `_running` (fields drop in order): the store lets go before this
    /// process may begin the conversation's next turn (engine-sqlite's hold relies on it).
    lease: TurnLease,
    _running: Running<'a>,
}

/// Why a conversation could not be held.
pub(super) enum NotHeld {
    /// A turn of it is under way: here (`""`), or, as the text says, elsewhere.
    Busy(&'static str),
    /// The store could not begin the turn.
    Failed(ConversationError),
}

impl<'a> Held<'a> {
    /// Holds `conversation` in `running` (this process's turns) and in `store`.
    pub(super) async fn begin(
        running: &'a Mutex<HashSet<String>>,
        store: &'a Conversations,
        conversation: &str,
    ) -> Result<Self, NotHeld> {
        let running = Running::start(running, conversation).ok_or(NotHeld::Busy(""))?;
        // Across replicas and processes: this process's turns are kept apart above, the
        // others' by the store.
        match store.begin_turn(conversation).await {
            Ok(Some(lease)) => Ok(Self {
                store,
                lease,
                _running: running,
            }),
            Ok(None) => Err(NotHeld::Busy(" in another process or replica")),
            Err(error) => Err(NotHeld::Failed(error)),
        }
    }

    /// The conversation's store.
    pub(super) fn store(&self) -> &'a Conversations {
        self.store
    }

    /// The store's lease, for what only the holder may write (steps, actions).
    pub(super) fn lease(&mut self) -> &mut TurnLease {
        &mut self.lease
    }

    /// Lets go of the conversation, recording nothing: for a turn or call that did
    /// nothing (a lease dropped instead would leave it interrupted). A failure is logged:
    /// the lease is gone either way.
    pub(super) async fn let_go(self) {
        let id = self.lease.conversation().to_owned();
        if let Err(error) = self.store.end_turn(self.lease, None).await {
            tracing::warn!(conversation = id, %error, "the conversation could not be let go");
        }
    }

    /// Ends the turn: records how it ended, with `state`, the conversation's state then
    /// (`ended`; `None` keeps no trace), and lets go. A failure is logged, since the
    /// turn's answer has gone or goes out regardless.
    pub(super) async fn end_turn(self, ended: Option<(&TurnSummary, String)>) {
        let id = self.lease.conversation().to_owned();
        if let Err(error) = self.store.end_turn(self.lease, ended).await {
            tracing::warn!(conversation = id, %error, "the turn's end could not be stored");
        }
    }

    /// Lets go after a call outside a turn, keeping `state` (no turn is recorded).
    pub(super) async fn end_call(self, state: String) -> Result<(), ConversationError> {
        self.store.end_call(self.lease, state).await
    }
}

/// A conversation's turn under way in this process: while it lives, no other turn of
/// that conversation starts here (they would both append to one history).
struct Running<'a> {
    running: &'a Mutex<HashSet<String>>,
    conversation: String,
}

impl<'a> Running<'a> {
    fn start(running: &'a Mutex<HashSet<String>>, conversation: &str) -> Option<Self> {
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

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.running
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .remove(&self.conversation);
    }
}
