//! The conversation's history, read-only: its recent messages, a page at a time, for a
//! tool or hook that summarizes, quotes or keys on what was said.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::BoxFuture;

/// The history of the conversation a call belongs to, and of no other: take
/// `history: History` (a tool or hook that takes it runs only in a conversation).
///
/// Read it newest first, a page at a time: [`recent`](Self::recent) answers the last
/// messages, oldest first within the page, and a cursor to the ones before them. The
/// user's messages and the model's are there, each with the tools it called summarized
/// (the tool and how its call ended); what the tools answered is not, nor anything a
/// hook or the engine added. Bounded: at most [`MAX_MESSAGES`](Self::MAX_MESSAGES) a
/// page and [`MAX_PAGE_BYTES`](Self::MAX_PAGE_BYTES) of text, each message's text cut
/// at [`MAX_MESSAGE_BYTES`](Self::MAX_MESSAGE_BYTES), and the last
/// [`MAX_REACH`](Self::MAX_REACH) messages of a conversation reachable.
///
/// In a turn's step, a tool reads the conversation as the model saw it when it called
/// the tool, the message it answers included; a hook, and a call outside a turn, read it
/// as stored when they run (a turn stores each step once its tools answered; a hook's
/// event payload holds the message and the reply of its turn). Configured secrets in its
/// text are redacted, as in the turn's events.
#[derive(Clone)]
pub struct History {
    source: Arc<dyn HistorySource>,
}

impl History {
    /// The most messages a page holds.
    pub const MAX_MESSAGES: usize = 100;
    /// The most bytes of text a page holds (but for its first message, always given).
    pub const MAX_PAGE_BYTES: usize = 64 * 1024;
    /// The longest a message's text is given, in bytes: a longer one is cut at a
    /// character's boundary, and marked `truncated`.
    pub const MAX_MESSAGE_BYTES: usize = 16 * 1024;
    /// How many of a conversation's last messages can be read, across pages.
    pub const MAX_REACH: usize = 1_000;
    /// The longest a summarized call's tool name is given, in bytes (a model may call a
    /// tool that does not exist, by any name).
    pub const MAX_TOOL_NAME_BYTES: usize = 64;

    /// The history `source` answers; for engines, and for tests (a
    /// [`HistorySnapshot`] of the messages the test gives).
    pub fn new(source: Arc<dyn HistorySource>) -> Self {
        Self { source }
    }

    /// The conversation's last `options.limit` messages before `options.before` (the
    /// newest when `None`), oldest first, and a cursor to those before them.
    pub async fn recent(&self, options: RecentMessages) -> Result<HistoryPage, HistoryError> {
        if options.limit == 0 || options.limit > Self::MAX_MESSAGES {
            return Err(HistoryError::Limit {
                asked: options.limit,
                most: Self::MAX_MESSAGES,
            });
        }
        self.source.recent(options).await
    }
}

impl fmt::Debug for History {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("History").finish_non_exhaustive()
    }
}

/// What [`History::recent`] reads: how many messages, and before which.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecentMessages {
    /// How many, 1 to [`History::MAX_MESSAGES`].
    pub limit: usize,
    /// Before this cursor (an earlier page's `older`); `None`: the newest.
    pub before: Option<HistoryCursor>,
}

impl RecentMessages {
    /// The last `limit` messages.
    pub const fn last(limit: usize) -> Self {
        Self {
            limit,
            before: None,
        }
    }

    /// The same read, of the messages before `cursor`.
    pub const fn before(mut self, cursor: HistoryCursor) -> Self {
        self.before = Some(cursor);
        self
    }
}

impl Default for RecentMessages {
    /// The last 20 messages.
    fn default() -> Self {
        Self::last(20)
    }
}

/// Where a page of history begins: give it back as [`RecentMessages::before`] for the
/// messages before it. It names a message's place in the conversation, so a tool may
/// keep it (in its state) and read on in a later call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct HistoryCursor(u64);

/// One page of the history.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistoryPage {
    /// The messages, oldest first.
    pub messages: Vec<HistoryMessage>,
    /// The cursor to the messages before these; `None` when there are none (or none
    /// within [`History::MAX_REACH`]).
    pub older: Option<HistoryCursor>,
}

/// A message of the history.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistoryMessage {
    /// Whose it is.
    pub role: HistoryRole,
    /// Its text (may be empty for a step in which the model only called tools).
    pub text: String,
    /// Whether `text` was cut at [`History::MAX_MESSAGE_BYTES`].
    pub truncated: bool,
    /// The tools the model called in it, in its order.
    pub tool_calls: Vec<ToolCallSummary>,
}

impl HistoryMessage {
    /// A message of `role` with `text`, cut at [`History::MAX_MESSAGE_BYTES`].
    pub fn new(role: HistoryRole, text: &str) -> Self {
        let kept = cut(text, History::MAX_MESSAGE_BYTES);
        Self {
            role,
            text: kept.to_owned(),
            truncated: kept.len() < text.len(),
            tool_calls: Vec::new(),
        }
    }

    /// The bytes it takes of a page.
    fn bytes(&self) -> usize {
        let calls: usize = self
            .tool_calls
            .iter()
            .map(|call| call.tool.len() + call.status.as_ref().map_or(0, String::len))
            .sum();
        self.text.len() + calls
    }
}

/// Whose a message is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HistoryRole {
    /// The person the conversation is with.
    User,
    /// The model.
    Assistant,
}

impl HistoryRole {
    /// Its name, as it serializes: `user`, `assistant`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Assistant => "assistant",
        }
    }
}

/// `text` up to `max` bytes, cut at a character's boundary.
fn cut(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// A tool call, summarized: which tool, and how its call ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCallSummary {
    /// The tool's wire name, as the model called it.
    pub tool: String,
    /// How its call ended, as the engine's events name it (`ok`, `error`, `timed_out`,
    /// `cancelled`, `skipped`); `None` while it has no answer.
    pub status: Option<String>,
}

impl ToolCallSummary {
    /// A call of `tool`, its name cut at [`History::MAX_TOOL_NAME_BYTES`], not answered
    /// yet.
    pub fn new(tool: &str) -> Self {
        Self {
            tool: cut(tool, History::MAX_TOOL_NAME_BYTES).to_owned(),
            status: None,
        }
    }
}

/// Why the history was not read.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HistoryError {
    /// The limit asked for is 0 or more than a page holds.
    Limit {
        /// The limit asked for.
        asked: usize,
        /// The most a page holds.
        most: usize,
    },
    /// The conversation's store could not be read; try again later.
    Unavailable(String),
}

impl fmt::Display for HistoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Limit { asked, most } => write!(
                f,
                "a page of history holds 1 to {most} messages, and {asked} were asked for"
            ),
            Self::Unavailable(why) => {
                write!(f, "the conversation's history could not be read: {why}")
            }
        }
    }
}

impl std::error::Error for HistoryError {}

/// Where a [`History`] reads from: what an engine implements (and a dev session, over
/// its connection).
pub trait HistorySource: Send + Sync + 'static {
    /// The page `options` asks for; its limit is within [`History::MAX_MESSAGES`].
    fn recent(&self, options: RecentMessages) -> BoxFuture<'_, Result<HistoryPage, HistoryError>>;
}

/// A conversation's messages held in memory, paged by the rules of [`History`]: what an
/// engine reads a history from, and what a test gives a tool.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HistorySnapshot {
    /// The last messages, at most [`History::MAX_REACH`].
    messages: Vec<HistoryMessage>,
    /// The place in the conversation of the first of `messages`.
    offset: u64,
}

impl HistorySnapshot {
    /// The history of a conversation whose messages are `messages`, oldest first; only
    /// the last [`History::MAX_REACH`] are kept.
    pub fn new(messages: Vec<HistoryMessage>) -> Self {
        Self::after(0, messages)
    }

    /// The history of a conversation whose first `skipped` messages are left out, and
    /// `messages` follow them: an engine converts no more than it keeps. Only the last
    /// [`History::MAX_REACH`] are kept.
    pub fn after(skipped: u64, mut messages: Vec<HistoryMessage>) -> Self {
        let cut = messages.len().saturating_sub(History::MAX_REACH);
        messages.drain(..cut);
        Self {
            messages,
            offset: skipped + cut as u64,
        }
    }

    /// The page `options` asks for.
    fn page(&self, options: RecentMessages) -> HistoryPage {
        let end = match options.before {
            Some(HistoryCursor(at)) => at.saturating_sub(self.offset) as usize,
            None => self.messages.len(),
        }
        .min(self.messages.len());
        let mut budget = History::MAX_PAGE_BYTES;
        let mut start = end;
        while start > 0 && end - start < options.limit {
            let bytes = self.messages[start - 1].bytes();
            // The first is always given: each is cut well below a page (its text at 16
            // KiB, its calls at a reply's most, each name at 64 bytes).
            if bytes > budget && start < end {
                break;
            }
            budget = budget.saturating_sub(bytes);
            start -= 1;
        }
        HistoryPage {
            messages: self.messages[start..end].to_vec(),
            older: (start > 0).then(|| HistoryCursor(self.offset + start as u64)),
        }
    }
}

impl HistorySource for HistorySnapshot {
    fn recent(&self, options: RecentMessages) -> BoxFuture<'_, Result<HistoryPage, HistoryError>> {
        let page = self.page(options);
        Box::pin(async move { Ok(page) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(count: usize, bytes: usize) -> HistorySnapshot {
        let messages = (0..count)
            .map(|at| {
                let text = format!("{at:0>width$}", width = bytes);
                HistoryMessage::new(HistoryRole::User, &text)
            })
            .collect();
        HistorySnapshot::new(messages)
    }

    fn texts(page: &HistoryPage) -> Vec<usize> {
        page.messages
            .iter()
            .map(|message| message.text.parse().unwrap())
            .collect()
    }

    #[test]
    fn pages_walk_back_from_the_newest_without_gap_or_overlap() {
        let history = said(7, 1);
        let first = history.page(RecentMessages::last(3));
        assert_eq!(texts(&first), [4, 5, 6]);
        let second = history.page(RecentMessages::last(3).before(first.older.unwrap()));
        assert_eq!(texts(&second), [1, 2, 3]);
        let third = history.page(RecentMessages::last(3).before(second.older.unwrap()));
        assert_eq!(texts(&third), [0]);
        assert_eq!(third.older, None);
    }

    #[test]
    fn a_page_stops_at_its_bytes_but_always_holds_one_message() {
        // Each message is 16 KiB: four fill a page.
        let history = said(10, History::MAX_MESSAGE_BYTES);
        let page = history.page(RecentMessages::last(10));
        assert_eq!(texts(&page), [6, 7, 8, 9]);
        let total: usize = page.messages.iter().map(|m| m.text.len()).sum();
        assert!(total <= History::MAX_PAGE_BYTES);
    }

    #[test]
    fn a_long_message_is_cut_at_a_character_boundary_and_says_so() {
        // One byte, then two-byte characters: the limit falls inside one.
        let text = format!("a{}", "é".repeat(History::MAX_MESSAGE_BYTES));
        let message = HistoryMessage::new(HistoryRole::Assistant, &text);
        assert!(message.truncated);
        assert_eq!(message.text.len(), History::MAX_MESSAGE_BYTES - 1);
        let whole = HistoryMessage::new(HistoryRole::User, "short");
        assert!(!whole.truncated);
        assert_eq!(whole.text, "short");
        let called = ToolCallSummary::new(&"ü".repeat(100));
        assert_eq!(called.tool.len(), History::MAX_TOOL_NAME_BYTES);
    }

    #[test]
    fn a_cursor_kept_from_an_earlier_call_reads_on_after_the_conversation_grew() {
        let earlier = said(History::MAX_REACH + 5, 1);
        let cursor = earlier.page(RecentMessages::last(3)).older.unwrap();
        // Ten messages later, in a new call's snapshot.
        let later = said(History::MAX_REACH + 15, 1);
        let page = later.page(RecentMessages::last(3).before(cursor));
        let first = History::MAX_REACH + 5 - 3;
        assert_eq!(texts(&page), [first - 3, first - 2, first - 1]);
    }

    #[test]
    fn only_the_last_messages_within_reach_are_kept_and_cursors_stay_places() {
        let history = said(History::MAX_REACH + 5, 1);
        let newest = history.page(RecentMessages::last(1));
        assert_eq!(texts(&newest), [History::MAX_REACH + 4]);
        // A cursor is a place in the whole conversation: the one before the reach's
        // first message answers nothing older.
        let mut page = newest;
        let mut read = 1;
        while let Some(cursor) = page.older {
            page = history.page(RecentMessages::last(100).before(cursor));
            read += page.messages.len();
        }
        assert_eq!(read, History::MAX_REACH);
        assert_eq!(texts(&page)[0], 5);
    }

    /// `future`'s output, when it is ready at its first poll (a snapshot's pages are).
    fn at_once<F: std::future::Future>(future: F) -> F::Output {
        let mut context = std::task::Context::from_waker(std::task::Waker::noop());
        match std::pin::pin!(future).poll(&mut context) {
            std::task::Poll::Ready(output) => output,
            std::task::Poll::Pending => panic!("a snapshot answers at once"),
        }
    }

    #[test]
    fn a_limit_out_of_bounds_is_refused() {
        let history = History::new(Arc::new(said(3, 1)));
        assert_eq!(
            at_once(history.recent(RecentMessages::last(History::MAX_MESSAGES)))
                .unwrap()
                .messages
                .len(),
            3
        );
        for limit in [0, History::MAX_MESSAGES + 1] {
            let error = at_once(history.recent(RecentMessages::last(limit))).unwrap_err();
            assert_eq!(
                error,
                HistoryError::Limit {
                    asked: limit,
                    most: History::MAX_MESSAGES
                }
            );
        }
    }
}
