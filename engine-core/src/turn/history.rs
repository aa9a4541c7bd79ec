//! The history a call's `History` reads: in a turn's step, the messages as the model saw
//! them when it called the tool; elsewhere (a hook, a call outside a turn), the
//! conversation as stored. Only ever the call's own conversation, and redacted as the
//! turn's events are.

use std::sync::{Arc, OnceLock};

use plugin_sdk::engine::{BoxFuture, Redact, RedactValues};
use plugin_sdk::history::{
    History, HistoryError, HistoryMessage, HistoryPage, HistoryRole, HistorySnapshot,
    HistorySource, RecentMessages, ToolCallSummary,
};

use crate::conversation::Message;
use crate::stores::Conversations;

/// The history of one step of a turn: the messages up to its calls, made into a snapshot
/// the first time one of them reads it, and shared by the others.
#[derive(Debug)]
pub(crate) struct StepHistory<'a> {
    messages: &'a [Message],
    snapshot: OnceLock<Arc<HistorySnapshot>>,
}

impl<'a> StepHistory<'a> {
    pub(crate) fn new(messages: &'a [Message]) -> Self {
        Self {
            messages,
            snapshot: OnceLock::new(),
        }
    }

    /// How many messages the step's calls follow.
    pub(crate) fn len(&self) -> usize {
        self.messages.len()
    }

    /// Its snapshot, made once.
    pub(super) fn snapshot(&self, redact: &RedactValues) -> Arc<HistorySnapshot> {
        let made = || Arc::new(snapshot(self.messages, redact));
        Arc::clone(self.snapshot.get_or_init(made))
    }
}

/// The history of a conversation whose messages are `messages`: the user's and the
/// model's, each model message with its calls summarized (a tool answer folds into its
/// call's status), and only the last [`History::MAX_REACH`] of them converted; every
/// secret of `redact` replaced.
fn snapshot(messages: &[Message], redact: &RedactValues) -> HistorySnapshot {
    let said = messages
        .iter()
        .filter(|message| !matches!(message, Message::Tool { .. }))
        .count();
    let skipped = said.saturating_sub(History::MAX_REACH);
    let mut kept = Vec::with_capacity(said - skipped);
    let mut passed = 0;
    // The ids of the calls of the last model message kept: its answers follow it (a
    // call id may repeat in a later turn's).
    let mut last_calls: Vec<&str> = Vec::new();
    for message in messages {
        match message {
            Message::Tool {
                call_id, status, ..
            } => {
                let at = last_calls.iter().position(|id| id == call_id);
                if let (Some(at), Some(last)) = (at, kept.last_mut()) {
                    let last: &mut HistoryMessage = last;
                    last.tool_calls[at].status = Some(status.as_str().to_owned());
                }
            }
            _ if passed < skipped => passed += 1,
            Message::User { content } => {
                last_calls.clear();
                kept.push(HistoryMessage::new(
                    HistoryRole::User,
                    &redact.redact(content),
                ));
            }
            Message::Assistant {
                content,
                tool_calls,
                ..
            } => {
                let mut summary =
                    HistoryMessage::new(HistoryRole::Assistant, &redact.redact(content));
                summary.tool_calls = tool_calls
                    .iter()
                    .map(|call| ToolCallSummary::new(&call.name))
                    .collect();
                last_calls = tool_calls.iter().map(|call| call.id.as_str()).collect();
                kept.push(summary);
            }
        }
    }
    HistorySnapshot::after(skipped as u64, kept)
}

/// The history of `conversation` as `conversations` stores it, read the first time a
/// page is asked for.
pub(super) struct Stored {
    pub(super) conversations: Arc<Conversations>,
    pub(super) conversation: String,
    pub(super) redact: Arc<RedactValues>,
    pub(super) read: tokio::sync::OnceCell<HistorySnapshot>,
}

impl HistorySource for Stored {
    fn recent(&self, options: RecentMessages) -> BoxFuture<'_, Result<HistoryPage, HistoryError>> {
        Box::pin(async move {
            let read = self.read.get_or_try_init(|| async {
                let messages = self
                    .conversations
                    .load(&self.conversation)
                    .await
                    .map_err(|error| HistoryError::Unavailable(error.to_string()))?;
                Ok(snapshot(&messages, &self.redact))
            });
            read.await?.recent(options).await
        })
    }
}
