//! Conversations: their messages, stored step by step, a record of each turn, and each
//! staged action performed (recorded before it runs, its outcome after).
//!
//! A backend implements [`ConversationStore`]; the engine reaches it through
//! [`Conversations`], which holds what every backend shares (who may continue a
//! conversation, what a replaced answer must be). In memory ([`MemoryConversations`]),
//! in SQLite (`engine-sqlite`), or in PostgreSQL, shared by every replica
//! (`engine-postgres`). The functions below are for backends: the errors and the
//! message encoding every store gives alike.

mod memory;

use std::any::Any;
use std::sync::Arc;

use plugin_sdk::engine::BoxFuture;

use crate::conversation::Message;
use crate::outcome::TurnSummary;
use crate::stores::records::{ActionRecord, ActionState, ConversationError, TurnRecord};

pub use memory::MemoryConversations;

/// Whose a conversation is: the agent and the end user its first stored turn was for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owner {
    /// The agent's name.
    pub agent: String,
    /// The subscriber's id.
    pub subscriber: String,
}

/// A conversation as an agent's listing shows it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ConversationSummary {
    /// Its id.
    pub id: String,
    /// The end user it is for.
    pub subscriber: String,
    /// How many turns it recorded.
    pub turns: u32,
    /// How many messages it holds.
    pub messages: u32,
    /// What its turns cost, in US dollars.
    pub cost_usd: f64,
}

/// A page of an agent's conversations, the one whose last turn was recorded most
/// recently first (those without a recorded turn last, by id), and where the next page
/// starts when there may be one.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ConversationPage {
    /// The conversations.
    pub conversations: Vec<ConversationSummary>,
    /// The cursor of the next page, or `None` after the last.
    pub next: Option<RecentCursor>,
}

/// Where a listing of conversations goes on: after the conversation `id`, whose last
/// turn was the store's `turn`-th (0: none recorded). Opaque to clients, as text
/// (`turn:id`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecentCursor {
    /// The store's order of the conversation's last recorded turn (0: none).
    pub turn: i64,
    /// The conversation's id.
    pub id: String,
}

impl RecentCursor {
    /// The cursor a client sent back, or `None` when it is not one.
    pub fn parse(text: &str) -> Option<Self> {
        let (turn, id) = text.split_once(':')?;
        Some(Self {
            turn: turn.parse().ok().filter(|turn: &i64| *turn >= 0)?,
            id: id.to_owned(),
        })
    }
}

impl std::fmt::Display for RecentCursor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.turn, self.id)
    }
}

impl serde::Serialize for RecentCursor {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// The most conversations a page of a listing holds, however many are asked.
pub const MAX_CONVERSATIONS_PAGE: usize = 200;

/// A store of conversations: what a backend implements. This workspace's backends run
/// the kernel's store suite (`engine-core/tests/stores`); another backend should too.
///
/// A turn holds its conversation from [`begin_turn`](Self::begin_turn) to
/// [`end_turn`](Self::end_turn): a store shared by processes or replicas lets no other
/// begin a turn of it meanwhile (within one engine, the engine keeps turns apart; give
/// each engine a store of its own). A backend is given back only the leases it made.
pub trait ConversationStore: Send + Sync + 'static {
    /// The backend's name, for the log (`memory`, `sqlite`, `postgres`).
    fn kind(&self) -> &'static str;

    /// Whether the store keeps conversations' state beyond this process (a file other
    /// processes may open too, a database replicas share): then what it holds is newer
    /// than anything this process remembers.
    fn keeps_state(&self) -> bool;

    /// Whose `conversation` is, if anyone's.
    fn owner<'a>(
        &'a self,
        conversation: &'a str,
    ) -> BoxFuture<'a, Result<Option<Owner>, ConversationError>>;

    /// Makes `conversation` `owner`'s if it is no one's yet; gives whose it is then.
    fn claim<'a>(
        &'a self,
        conversation: &'a str,
        owner: &'a Owner,
    ) -> BoxFuture<'a, Result<Owner, ConversationError>>;

    /// The messages of `conversation`, oldest first (none for a new one).
    fn load<'a>(
        &'a self,
        conversation: &'a str,
    ) -> BoxFuture<'a, Result<Vec<Message>, ConversationError>>;

    /// Stores `messages` as the conversation's from position `at` on, all or none; see
    /// [`Conversations::append`].
    fn append<'a>(
        &'a self,
        lease: &'a mut TurnLease,
        at: usize,
        messages: &'a [Message],
    ) -> BoxFuture<'a, Result<(), ConversationError>>;

    /// The state `conversation`'s tools kept at the end of its last turn (a JSON
    /// object), if any.
    fn load_state<'a>(
        &'a self,
        conversation: &'a str,
    ) -> BoxFuture<'a, Result<Option<String>, ConversationError>>;

    /// Begins a turn of `conversation`: `None` when another process or replica holds it.
    /// A turn one left running when it stopped is taken over, and its actions under way
    /// are marked unknown.
    fn begin_turn<'a>(
        &'a self,
        conversation: &'a str,
    ) -> BoxFuture<'a, Result<Option<TurnLease>, ConversationError>>;

    /// Ends `lease`'s turn: records how it ended with `state`, the conversation's state
    /// then (a JSON object), unless `ended` is `None` (a turn that keeps no trace), and
    /// lets go of the conversation.
    fn end_turn<'a>(
        &'a self,
        lease: TurnLease,
        ended: Option<(&'a TurnSummary, String)>,
    ) -> BoxFuture<'a, Result<(), ConversationError>>;

    /// Lets go of `lease`'s conversation after a tool call outside a turn, keeping
    /// `state`; records no turn.
    fn end_call(
        &self,
        lease: TurnLease,
        state: String,
    ) -> BoxFuture<'_, Result<(), ConversationError>>;

    /// The turns of `conversation` the store recorded, oldest first.
    fn turns<'a>(
        &'a self,
        conversation: &'a str,
    ) -> BoxFuture<'a, Result<Vec<TurnRecord>, ConversationError>>;

    /// Records that `record`'s action is about to be performed in `lease`'s turn: its
    /// number. A shared store refuses it when the turn no longer holds its conversation
    /// or the call's action was claimed.
    fn record_action<'a>(
        &'a self,
        lease: &'a mut TurnLease,
        record: ActionRecord,
    ) -> BoxFuture<'a, Result<i64, ConversationError>>;

    /// Records how the action numbered `id` ended.
    fn settle_action(
        &self,
        id: i64,
        state: ActionState,
        detail: Option<String>,
    ) -> BoxFuture<'_, Result<(), ConversationError>>;

    /// Replaces the message at `position` of `conversation` with `answer` if it is the
    /// tool answer to `call_id`: whether it was.
    fn replace_answer<'a>(
        &'a self,
        conversation: &'a str,
        position: usize,
        call_id: &'a str,
        answer: &'a Message,
    ) -> BoxFuture<'a, Result<bool, ConversationError>>;

    /// The actions performed in `conversation`, oldest first.
    fn actions<'a>(
        &'a self,
        conversation: &'a str,
    ) -> BoxFuture<'a, Result<Vec<ActionRecord>, ConversationError>>;

    /// `agent`'s conversations, as [`ConversationPage`] orders them, after `after`, at
    /// most `limit` (at most [`MAX_CONVERSATIONS_PAGE`]). [`ConversationPage::rows`]
    /// makes the page from a read of one more. A store of an engine's own that leaves
    /// it out answers that it does not list conversations.
    fn recent<'a>(
        &'a self,
        agent: &'a str,
        limit: usize,
        after: Option<&'a RecentCursor>,
    ) -> BoxFuture<'a, Result<ConversationPage, ConversationError>> {
        let _ = (agent, limit, after);
        Box::pin(async {
            Err(ConversationError(
                "this conversation store does not list conversations".to_owned(),
            ))
        })
    }
}

impl ConversationPage {
    /// The page of at most `limit` conversations from `fetched` (each with the order of
    /// its last turn), read in order asking for one more than `limit`: when that one
    /// came, there is a next page.
    pub fn rows(mut fetched: Vec<(i64, ConversationSummary)>, limit: usize) -> Self {
        let next = (fetched.len() > limit)
            .then(|| {
                fetched.truncate(limit);
                fetched.last().map(|(turn, last)| RecentCursor {
                    turn: *turn,
                    id: last.id.clone(),
                })
            })
            .flatten();
        Self {
            conversations: fetched.into_iter().map(|(_, summary)| summary).collect(),
            next,
        }
    }
}

/// A turn's hold on its conversation, from [`ConversationStore::begin_turn`] to its end.
/// A backend keeps in it what it needs to let go (a lock, a connection): dropped with the
/// lease, so a turn whose end failed or never came (a dropped future) lets go too.
pub struct TurnLease {
    conversation: String,
    hold: Option<Box<dyn Any + Send + Sync>>,
}

impl TurnLease {
    /// A lease of `conversation` that holds nothing beyond the engine's own order.
    pub fn new(conversation: impl Into<String>) -> Self {
        Self {
            conversation: conversation.into(),
            hold: None,
        }
    }

    /// A lease of `conversation` with the backend's `hold`.
    pub fn holding(conversation: impl Into<String>, hold: impl Any + Send + Sync) -> Self {
        Self {
            conversation: conversation.into(),
            hold: Some(Box::new(hold)),
        }
    }

    /// The conversation it holds.
    pub fn conversation(&self) -> &str {
        &self.conversation
    }

    /// The backend's hold, if it is an `H`.
    pub fn hold_mut<H: Any>(&mut self) -> Option<&mut H> {
        self.hold.as_mut()?.downcast_mut()
    }

    /// The conversation and the backend's hold, if it is an `H`.
    pub fn into_parts<H: Any>(self) -> (String, Option<H>) {
        let hold = self
            .hold
            .and_then(|hold| (hold as Box<dyn Any>).downcast().ok())
            .map(|hold| *hold);
        (self.conversation, hold)
    }
}

/// Where conversations are kept: a [`ConversationStore`], with what every backend shares.
/// Not `Clone`: one engine's store, since the engine is what keeps its turns apart within
/// a process.
pub struct Conversations {
    store: Arc<dyn ConversationStore>,
}

impl std::fmt::Debug for Conversations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conversations")
            .field("backend", &self.store.kind())
            .finish()
    }
}

impl Conversations {
    /// Conversations kept in `store`.
    pub fn new(store: impl ConversationStore) -> Self {
        Self {
            store: Arc::new(store),
        }
    }

    /// Conversations kept in memory: gone when the engine stops.
    pub fn memory() -> Self {
        Self::new(MemoryConversations::default())
    }

    /// Whether the store keeps conversations' state beyond this process: see
    /// [`ConversationStore::keeps_state`].
    pub fn keeps_state(&self) -> bool {
        self.store.keeps_state()
    }

    /// Makes `conversation` `agent`'s with `subscriber`, if it is no one's yet; refuses a
    /// conversation that is another agent's or another subscriber's (a client must not
    /// read or continue a history it did not make).
    pub async fn claim(
        &self,
        conversation: &str,
        agent: &str,
        subscriber: &str,
    ) -> Result<(), ConversationError> {
        let asked = Owner {
            agent: agent.to_owned(),
            subscriber: subscriber.to_owned(),
        };
        let owner = self.store.claim(conversation, &asked).await?;
        if owner != asked {
            return Err(anothers(conversation));
        }
        Ok(())
    }

    /// Whether `agent` may continue `conversation` for `subscriber`: the conversation is
    /// theirs, or no one's yet (`Ok(false)`; it becomes theirs once a turn stores a
    /// message, with [`claim`](Self::claim)); another's is refused as `claim` refuses it.
    /// A turn that stores nothing (a failed resume, a halt that leaves no trace) thus
    /// claims nothing.
    pub async fn may_continue(
        &self,
        conversation: &str,
        agent: &str,
        subscriber: &str,
    ) -> Result<bool, ConversationError> {
        match self.store.owner(conversation).await? {
            None => Ok(false),
            Some(owner) if owner.agent == agent && owner.subscriber == subscriber => Ok(true),
            Some(_) => Err(anothers(conversation)),
        }
    }

    /// The messages of `conversation`, oldest first (none for a new one).
    pub async fn load(&self, conversation: &str) -> Result<Vec<Message>, ConversationError> {
        self.store.load(conversation).await
    }

    /// Stores `messages` as the conversation's messages from position `at` on (its
    /// stored length when `lease`'s turn loaded it, plus what the turn stored since), all
    /// or none. A position already holding the same message keeps it, so a step stored
    /// again after an answer that was lost is not stored twice; one holding another
    /// message fails, and so does an `at` past the end. In a shared database this runs on
    /// the turn's own connection: a turn that lost its conversation stores nothing.
    pub async fn append(
        &self,
        lease: &mut TurnLease,
        at: usize,
        messages: &[Message],
    ) -> Result<(), ConversationError> {
        self.store.append(lease, at, messages).await
    }

    /// The state `conversation`'s tools kept, as stored at the end of its last turn (a
    /// JSON object); `None` when none was.
    pub async fn load_state(
        &self,
        conversation: &str,
    ) -> Result<Option<String>, ConversationError> {
        self.store.load_state(conversation).await
    }

    /// Begins a turn of `conversation`: `None` when a turn of it is under way on
    /// another replica sharing the store, or in another process on the same SQLite store.
    /// A turn that replica or process left running when it stopped is taken over, and its
    /// actions under way are marked unknown.
    pub async fn begin_turn(
        &self,
        conversation: &str,
    ) -> Result<Option<TurnLease>, ConversationError> {
        self.store.begin_turn(conversation).await
    }

    /// Ends `lease`'s turn: records how it ended with `state`, the conversation's state
    /// (a JSON object) then, unless `ended` is `None` (a turn that keeps no trace), and
    /// lets go of the conversation.
    pub async fn end_turn(
        &self,
        lease: TurnLease,
        ended: Option<(&TurnSummary, String)>,
    ) -> Result<(), ConversationError> {
        self.store.end_turn(lease, ended).await
    }

    /// Lets go of `lease`'s conversation after a tool call outside a turn (`engine call
    /// --conversation`), keeping `state`, the conversation's state then (a JSON object):
    /// no turn is recorded, since none ran.
    pub async fn end_call(&self, lease: TurnLease, state: String) -> Result<(), ConversationError> {
        self.store.end_call(lease, state).await
    }

    /// The turns of `conversation` the store recorded, oldest first.
    pub async fn turns(&self, conversation: &str) -> Result<Vec<TurnRecord>, ConversationError> {
        self.store.turns(conversation).await
    }

    /// Records that the action of `record` (staged by its call) is about to be performed
    /// in `lease`'s turn: its number, for [`Conversations::settle_action`]. In a shared
    /// database this claims it: refused when the turn no longer holds its conversation
    /// (its connection to the database was lost) or the call's action was claimed.
    pub async fn record_action(
        &self,
        lease: &mut TurnLease,
        record: ActionRecord,
    ) -> Result<i64, ConversationError> {
        self.store.record_action(lease, record).await
    }

    /// Records how the action numbered `id` ended.
    pub async fn settle_action(
        &self,
        id: i64,
        state: ActionState,
        detail: Option<String>,
    ) -> Result<(), ConversationError> {
        self.store.settle_action(id, state, detail).await
    }

    /// Replaces the tool answer at `position` (0 for the first message) of
    /// `conversation` with `answer`, an action's, once what became of it is known; only
    /// if the message there answers the same call (another writer may have moved it).
    pub async fn replace_answer(
        &self,
        conversation: &str,
        position: usize,
        answer: &Message,
    ) -> Result<(), ConversationError> {
        let Message::Tool { call_id, .. } = answer else {
            return Err(ConversationError("only a tool answer is replaced".into()));
        };
        if self
            .store
            .replace_answer(conversation, position, call_id, answer)
            .await?
        {
            Ok(())
        } else {
            Err(ConversationError(format!(
                "the answer to `{call_id}` is not at {position} in `{conversation}`"
            )))
        }
    }

    /// The actions performed in `conversation`, oldest first.
    pub async fn actions(
        &self,
        conversation: &str,
    ) -> Result<Vec<ActionRecord>, ConversationError> {
        self.store.actions(conversation).await
    }

    /// Whose `conversation` is, if anyone's.
    pub async fn owner(&self, conversation: &str) -> Result<Option<Owner>, ConversationError> {
        self.store.owner(conversation).await
    }

    /// `agent`'s conversations, the most recently active first, a page at a time (see
    /// [`ConversationStore::recent`]); a limit of 0 answers one.
    pub async fn recent(
        &self,
        agent: &str,
        limit: usize,
        after: Option<&RecentCursor>,
    ) -> Result<ConversationPage, ConversationError> {
        self.store
            .recent(agent, limit.clamp(1, MAX_CONVERSATIONS_PAGE), after)
            .await
    }
}

fn anothers(conversation: &str) -> ConversationError {
    ConversationError(format!(
        "the conversation `{conversation}` belongs to another agent or end user"
    ))
}

/// A turn's step would start past the conversation's end.
pub fn a_gap(at: usize) -> ConversationError {
    ConversationError(format!(
        "the conversation has fewer than {at} messages: this turn's steps would leave a gap"
    ))
}

/// A turn's step met another message where it would store its own.
pub fn not_this_turns(at: usize) -> ConversationError {
    ConversationError(format!(
        "the conversation's message {at} is not the one this turn stores: another turn wrote it"
    ))
}

/// Each message as a store keeps it (JSON text).
pub fn bodies(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .map(|message| serde_json::to_string(message).expect("a message serializes"))
        .collect()
}

/// A stored message, read back.
pub fn parse_message(body: &str) -> Result<Message, ConversationError> {
    serde_json::from_str(body)
        .map_err(|error| ConversationError(format!("a stored message is unreadable: {error}")))
}
