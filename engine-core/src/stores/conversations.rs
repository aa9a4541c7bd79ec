//! Conversations: their messages, stored step by step, a record of each turn, and each
//! staged action performed (recorded before it runs, its outcome after).
//!
//! With the `sqlite` feature, in `conversations.sqlite` under the data directory (WAL,
//! one transaction per step, so a crash loses at most the step under way and never
//! leaves a tool call without its answer); with `[database]` configured, in PostgreSQL,
//! shared by every replica ([`crate::stores::postgres`]); without either, in memory.

use std::collections::HashMap;
#[cfg(feature = "sqlite")]
use std::sync::Arc;
use std::sync::Mutex;

use crate::conversation::Message;
use crate::outcome::TurnSummary;
#[cfg(feature = "postgres")]
use crate::stores::postgres::{DatabaseError, Postgres, TurnEnded, TurnLock};
#[cfg(feature = "sqlite")]
use crate::stores::records::INTERRUPTED;
use crate::stores::records::{ActionRecord, ActionState, ConversationError, TurnRecord};
#[cfg(feature = "sqlite")]
use crate::stores::sqlite_turns::Holder;

/// How long a step waits for the database while another process writes.
#[cfg(feature = "sqlite")]
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Where conversations are kept.
pub struct Conversations {
    backend: Backend,
}

enum Backend {
    Memory(Mutex<Memory>),
    #[cfg(feature = "sqlite")]
    Sqlite(Arc<Database>),
    #[cfg(feature = "postgres")]
    Postgres(Arc<Postgres>),
}

/// A turn's hold on its conversation, from [`Conversations::begin_turn`] to
/// [`Conversations::end_turn`]: no other replica, nor any other process on the same
/// SQLite store, begins a turn of the conversation meanwhile; within a process, the
/// engine keeps turns apart.
pub struct TurnLease {
    conversation: String,
    #[cfg(feature = "postgres")]
    lock: Option<TurnLock>,
    #[cfg(feature = "sqlite")]
    hold: Option<SqliteHold>,
}

/// A SQLite store's hold on a conversation for a turn: let go by the turn's end, or, when
/// that end failed or never came (a dropped future), when dropped, so that no other
/// process finds the conversation held while this one lives.
#[cfg(feature = "sqlite")]
struct SqliteHold {
    database: Arc<Database>,
    conversation: String,
    /// Whether the end let go of it already.
    released: bool,
}

#[cfg(feature = "sqlite")]
impl Drop for SqliteHold {
    fn drop(&mut self) {
        if self.released {
            return;
        }
        // At once, on this thread (a short delete): within this process, the next turn of
        // the conversation begins only after this (its RunningTurn is let go later), and
        // a release done later could remove that turn's hold.
        let connection = self
            .database
            .connection
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Err(error) = self.database.holder.end(&connection, &self.conversation) {
            tracing::error!(conversation = self.conversation, %error, "a turn's hold on its conversation could not be let go: other processes find it busy until this one stops");
        }
    }
}

/// The SQLite database, and whether this process has settled what an earlier one left
/// running.
#[cfg(feature = "sqlite")]
struct Database {
    connection: Mutex<rusqlite::Connection>,
    /// Set once the actions an earlier process left `performing` are marked `unknown`:
    /// on this process's first use of the store, not when it opens it, so that `engine
    /// tools` or `check` beside a running `serve` leave its performs alone.
    settled: std::sync::atomic::AtomicBool,
    /// This opening of the store, which other processes' turns see.
    holder: Holder,
}

/// Conversations in memory: their messages, whose each is, and their actions.
#[derive(Default)]
struct Memory {
    messages: HashMap<String, Vec<Message>>,
    owners: HashMap<String, (String, String)>,
    actions: Vec<(String, ActionRecord)>,
}

impl std::fmt::Debug for Conversations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.backend {
            Backend::Memory(_) => "memory",
            #[cfg(feature = "sqlite")]
            Backend::Sqlite(_) => "sqlite",
            #[cfg(feature = "postgres")]
            Backend::Postgres(_) => "postgres",
        };
        f.debug_struct("Conversations")
            .field("backend", &kind)
            .finish()
    }
}

impl Conversations {
    /// Conversations kept in memory: gone when the engine stops.
    pub fn memory() -> Self {
        Self {
            backend: Backend::Memory(Mutex::default()),
        }
    }

    /// Conversations kept in the SQLite database at `path`, created if missing.
    #[cfg(feature = "sqlite")]
    pub fn open(path: &std::path::Path) -> Result<Self, ConversationError> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|error| {
                ConversationError(format!("cannot create {}: {error}", parent.display()))
            })?;
        }
        let connection = rusqlite::Connection::open(path).map_err(sql)?;
        // The knowledge store's settings: WAL with full syncing, a bounded wait on a lock
        // another process holds.
        crate::stores::sqlite_knowledge::connections::configure(&connection, BUSY_TIMEOUT)
            .map_err(sql)?;
        connection
            .execute_batch(
                "CREATE TABLE IF NOT EXISTS messages (
                     conversation TEXT NOT NULL,
                     seq INTEGER NOT NULL,
                     body TEXT NOT NULL,
                     PRIMARY KEY (conversation, seq)
                 ) WITHOUT ROWID;
                 CREATE TABLE IF NOT EXISTS turns (
                     conversation TEXT NOT NULL,
                     ended_at INTEGER NOT NULL,
                     stop TEXT NOT NULL,
                     input_tokens INTEGER NOT NULL,
                     output_tokens INTEGER NOT NULL,
                     cost_usd REAL NOT NULL,
                     model_requests INTEGER NOT NULL
                 );
                 CREATE INDEX IF NOT EXISTS turns_by_conversation ON turns (conversation);
                 CREATE TABLE IF NOT EXISTS owners (
                     conversation TEXT PRIMARY KEY,
                     agent TEXT NOT NULL,
                     subscriber TEXT NOT NULL
                 ) WITHOUT ROWID;
                 CREATE TABLE IF NOT EXISTS states (
                     conversation TEXT PRIMARY KEY,
                     body TEXT NOT NULL
                 ) WITHOUT ROWID;
                 CREATE TABLE IF NOT EXISTS actions (
                     id INTEGER PRIMARY KEY,
                     conversation TEXT NOT NULL,
                     call_id TEXT NOT NULL,
                     action TEXT NOT NULL,
                     arguments TEXT NOT NULL,
                     subscriber TEXT NOT NULL,
                     state TEXT NOT NULL,
                     detail TEXT,
                     position INTEGER
                 );
                 CREATE INDEX IF NOT EXISTS actions_by_conversation ON actions (conversation);
                 CREATE TABLE IF NOT EXISTS running_turns (
                     conversation TEXT PRIMARY KEY,
                     holder TEXT NOT NULL
                 ) WITHOUT ROWID;",
            )
            .map_err(sql)?;
        // A store made before records had positions gains the column; its records keep none.
        let has_position = connection
            .prepare("SELECT 1 FROM pragma_table_info('actions') WHERE name = 'position'")
            .and_then(|mut statement| statement.exists([]))
            .map_err(sql)?;
        if !has_position {
            // Another process opening the same old file may add it first.
            if let Err(error) =
                connection.execute_batch("ALTER TABLE actions ADD COLUMN position INTEGER")
            {
                if !error.to_string().contains("duplicate column") {
                    return Err(sql(error));
                }
            }
        }
        Ok(Self {
            backend: Backend::Sqlite(Arc::new(Database {
                connection: Mutex::new(connection),
                settled: Default::default(),
                holder: Holder::new(path)?,
            })),
        })
    }

    /// Conversations kept in the shared PostgreSQL database `database`.
    #[cfg(feature = "postgres")]
    pub fn postgres(database: Arc<Postgres>) -> Self {
        Self {
            backend: Backend::Postgres(database),
        }
    }

    /// Whether the store keeps conversations' state beyond this process (SQLite, which
    /// other processes may open too, or the database replicas share): then what it holds
    /// is newer than anything this process remembers.
    pub fn keeps_state(&self) -> bool {
        !matches!(self.backend, Backend::Memory(_))
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
        let owner = match &self.backend {
            Backend::Memory(all) => all
                .lock()
                .expect("no panic holds the lock")
                .owners
                .entry(conversation.to_owned())
                .or_insert_with(|| (agent.to_owned(), subscriber.to_owned()))
                .clone(),
            #[cfg(feature = "sqlite")]
            Backend::Sqlite(connection) => {
                let (conversation, agent, subscriber) = (
                    conversation.to_owned(),
                    agent.to_owned(),
                    subscriber.to_owned(),
                );
                blocking(connection, move |connection| {
                    connection
                        .execute(
                            "INSERT INTO owners (conversation, agent, subscriber) VALUES (?1, ?2, ?3)
                             ON CONFLICT (conversation) DO NOTHING",
                            [&conversation, &agent, &subscriber],
                        )
                        .map_err(sql)?;
                    connection
                        .query_row(
                            "SELECT agent, subscriber FROM owners WHERE conversation = ?1",
                            [&conversation],
                            |row| Ok((row.get(0)?, row.get(1)?)),
                        )
                        .map_err(sql)
                })
                .await?
            }
            #[cfg(feature = "postgres")]
            Backend::Postgres(database) => database.claim(conversation, agent, subscriber).await?,
        };
        if owner.0 != agent || owner.1 != subscriber {
            return Err(ConversationError(format!(
                "the conversation `{conversation}` belongs to another agent or end user"
            )));
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
        let owner: Option<(String, String)> = match &self.backend {
            Backend::Memory(all) => all
                .lock()
                .expect("no panic holds the lock")
                .owners
                .get(conversation)
                .cloned(),
            #[cfg(feature = "sqlite")]
            Backend::Sqlite(connection) => {
                let conversation = conversation.to_owned();
                blocking(connection, move |connection| {
                    use rusqlite::OptionalExtension as _;
                    connection
                        .query_row(
                            "SELECT agent, subscriber FROM owners WHERE conversation = ?1",
                            [&conversation],
                            |row| Ok((row.get(0)?, row.get(1)?)),
                        )
                        .optional()
                        .map_err(sql)
                })
                .await?
            }
            #[cfg(feature = "postgres")]
            Backend::Postgres(database) => database.owner(conversation).await?,
        };
        match owner {
            None => Ok(false),
            Some((held_agent, held_subscriber))
                if held_agent == agent && held_subscriber == subscriber =>
            {
                Ok(true)
            }
            Some(_) => Err(ConversationError(format!(
                "the conversation `{conversation}` belongs to another agent or end user"
            ))),
        }
    }

    /// The messages of `conversation`, oldest first (none for a new one).
    pub async fn load(&self, conversation: &str) -> Result<Vec<Message>, ConversationError> {
        match &self.backend {
            Backend::Memory(all) => Ok(all
                .lock()
                .expect("no panic holds the lock")
                .messages
                .get(conversation)
                .cloned()
                .unwrap_or_default()),
            #[cfg(feature = "sqlite")]
            Backend::Sqlite(connection) => {
                let conversation = conversation.to_owned();
                blocking(connection, move |connection| {
                    let mut statement = connection
                        .prepare_cached(
                            "SELECT body FROM messages WHERE conversation = ?1 ORDER BY seq",
                        )
                        .map_err(sql)?;
                    let rows = statement
                        .query_map([&conversation], |row| row.get::<_, String>(0))
                        .map_err(sql)?;
                    rows.map(|body| parse_message(&body.map_err(sql)?))
                        .collect()
                })
                .await
            }
            #[cfg(feature = "postgres")]
            Backend::Postgres(database) => database
                .load(conversation)
                .await?
                .iter()
                .map(|body| parse_message(body))
                .collect(),
        }
    }

    /// Stores `messages` as the conversation's messages from position `at` on (its
    /// stored length when `lease`'s turn loaded it, plus what the turn stored since), all
    /// or none. A position already holding the same message keeps it, so a step stored
    /// again after an answer that was lost is not stored twice; one holding another
    /// message fails, and so does an `at` past the end. In a shared database this runs on the turn's own connection: a turn
    /// that lost its conversation stores nothing.
    pub async fn append(
        &self,
        lease: &mut TurnLease,
        at: usize,
        messages: &[Message],
    ) -> Result<(), ConversationError> {
        let conversation = lease.conversation.as_str();
        match &self.backend {
            Backend::Memory(all) => {
                let mut all = all.lock().expect("no panic holds the lock");
                let stored = all.messages.entry(conversation.to_owned()).or_default();
                let held = stored.len().saturating_sub(at).min(messages.len());
                if stored.len() < at {
                    return Err(a_gap(at));
                }
                if stored[at..at + held] != messages[..held] {
                    return Err(not_this_turns(at));
                }
                stored.extend_from_slice(&messages[held..]);
                Ok(())
            }
            #[cfg(feature = "sqlite")]
            Backend::Sqlite(connection) => {
                let conversation = conversation.to_owned();
                let bodies = bodies(messages);
                blocking(connection, move |connection| {
                    let transaction = connection.transaction().map_err(sql)?;
                    let next: i64 = transaction
                        .query_row(
                            "SELECT COALESCE(MAX(seq) + 1, 0) FROM messages WHERE conversation = ?1",
                            [&conversation],
                            |row| row.get(0),
                        )
                        .map_err(sql)?;
                    if at as i64 > next {
                        return Err(a_gap(at));
                    }
                    {
                        let mut insert = transaction
                            .prepare_cached(
                                "INSERT INTO messages (conversation, seq, body) VALUES (?1, ?2, ?3)
                                 ON CONFLICT (conversation, seq) DO NOTHING",
                            )
                            .map_err(sql)?;
                        let mut held = transaction
                            .prepare_cached(
                                "SELECT body FROM messages WHERE conversation = ?1 AND seq = ?2",
                            )
                            .map_err(sql)?;
                        for (offset, body) in bodies.iter().enumerate() {
                            let seq = (at + offset) as i64;
                            let added = insert
                                .execute(rusqlite::params![conversation, seq, body])
                                .map_err(sql)?;
                            if added == 0 {
                                let held: String = held
                                    .query_row(rusqlite::params![conversation, seq], |row| {
                                        row.get(0)
                                    })
                                    .map_err(sql)?;
                                if &held != body {
                                    return Err(not_this_turns(at + offset));
                                }
                            }
                        }
                    }
                    transaction.commit().map_err(sql)
                })
                .await
            }
            #[cfg(feature = "postgres")]
            Backend::Postgres(database) => {
                let Some(lock) = lease.lock.as_mut() else {
                    return Err(ConversationError(
                        "a turn in a shared database stores through its lease".into(),
                    ));
                };
                Ok(database.append(lock, at, &bodies(messages)).await?)
            }
        }
    }

    /// The state `conversation`'s tools kept, as stored at the end of its last turn (a
    /// JSON object); `None` when none was.
    pub async fn load_state(
        &self,
        conversation: &str,
    ) -> Result<Option<String>, ConversationError> {
        match &self.backend {
            // In memory, the engine's own state store is all there is.
            Backend::Memory(_) => {
                let _ = conversation;
                Ok(None)
            }
            #[cfg(feature = "sqlite")]
            Backend::Sqlite(connection) => {
                let conversation = conversation.to_owned();
                blocking(connection, move |connection| {
                    use rusqlite::OptionalExtension;
                    connection
                        .query_row(
                            "SELECT body FROM states WHERE conversation = ?1",
                            [&conversation],
                            |row| row.get(0),
                        )
                        .optional()
                        .map_err(sql)
                })
                .await
            }
            #[cfg(feature = "postgres")]
            Backend::Postgres(database) => Ok(database.load_state(conversation).await?),
        }
    }

    /// Begins a turn of `conversation`: `None` when a turn of it is under way on
    /// another replica sharing the store, or in another process on the same SQLite store.
    /// A turn that replica or process left running when it stopped is taken over, and its
    /// actions under way are marked unknown.
    pub async fn begin_turn(
        &self,
        conversation: &str,
    ) -> Result<Option<TurnLease>, ConversationError> {
        #[cfg(feature = "postgres")]
        if let Backend::Postgres(database) = &self.backend {
            database.sweep_in_background();
            let turn = format!("{}-{}", database.replica(), next_turn());
            let Some(lock) = database.begin_turn(conversation, &turn).await? else {
                return Ok(None);
            };
            return Ok(Some(TurnLease {
                conversation: conversation.to_owned(),
                lock: Some(lock),
                #[cfg(feature = "sqlite")]
                hold: None,
            }));
        }
        #[cfg(feature = "sqlite")]
        if let Backend::Sqlite(database) = &self.backend {
            let (held, conversation) = (Arc::clone(database), conversation.to_owned());
            let begun = blocking(database, move |connection| {
                let transaction = connection
                    .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                    .map_err(sql)?;
                let begun = held
                    .holder
                    .begin(&transaction, &conversation)
                    .map_err(sql)?;
                transaction.commit().map_err(sql)?;
                Ok(begun.then_some(conversation))
            })
            .await?;
            return Ok(begun.map(|conversation| TurnLease {
                hold: Some(SqliteHold {
                    database: Arc::clone(database),
                    conversation: conversation.clone(),
                    released: false,
                }),
                conversation,
                #[cfg(feature = "postgres")]
                lock: None,
            }));
        }
        Ok(Some(TurnLease {
            conversation: conversation.to_owned(),
            #[cfg(feature = "postgres")]
            lock: None,
            #[cfg(feature = "sqlite")]
            hold: None,
        }))
    }

    /// Ends `lease`'s turn: records how it ended with `state`, the conversation's state
    /// (a JSON object) then, unless `ended` is `None` (a turn that keeps no trace), and
    /// lets go of the conversation.
    pub async fn end_turn(
        &self,
        lease: TurnLease,
        ended: Option<(&TurnSummary, String)>,
    ) -> Result<(), ConversationError> {
        match &self.backend {
            // Memory keeps the messages only: a turn's record is for the stored history,
            // and the engine's own state store is all there is.
            Backend::Memory(_) => {
                let _ = (lease, ended);
                Ok(())
            }
            #[cfg(feature = "sqlite")]
            Backend::Sqlite(connection) => {
                let held = Arc::clone(connection);
                let conversation = lease.conversation;
                let ended = match ended {
                    None => {
                        blocking(connection, move |connection| {
                            held.holder.end(connection, &conversation).map_err(sql)
                        })
                        .await
                    }
                    Some((summary, state)) => {
                        let stop = serde_json::to_string(&summary.stop).expect("a stop serializes");
                        let summary = summary.clone();
                        blocking(connection, move |connection| {
                            let now = std::time::SystemTime::now()
                                .duration_since(std::time::UNIX_EPOCH)
                                .map_or(0, |elapsed| elapsed.as_secs() as i64);
                            let transaction = connection.transaction().map_err(sql)?;
                            transaction
                                .execute(
                                    "INSERT INTO turns VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                                    rusqlite::params![
                                        conversation,
                                        now,
                                        stop,
                                        summary.usage.input_tokens as i64,
                                        summary.usage.output_tokens as i64,
                                        summary.cost_usd,
                                        summary.model_requests,
                                    ],
                                )
                                .map_err(sql)?;
                            keep_state_and_let_go(transaction, &held.holder, &conversation, &state)
                        })
                        .await
                    }
                };
                released(ended, lease.hold)
            }
            #[cfg(feature = "postgres")]
            Backend::Postgres(database) => {
                let Some(lock) = lease.lock else {
                    return Ok(());
                };
                let ended = ended.map(|(summary, state)| {
                    (
                        serde_json::to_string(&summary.stop).expect("a stop serializes"),
                        summary,
                        state,
                    )
                });
                let ended = ended.as_ref().map(|(stop, summary, state)| TurnEnded {
                    stop,
                    input_tokens: summary.usage.input_tokens as i64,
                    output_tokens: summary.usage.output_tokens as i64,
                    cost_usd: summary.cost_usd,
                    model_requests: summary.model_requests as i32,
                    state: state.clone(),
                });
                Ok(database.end_turn(lock, ended).await?)
            }
        }
    }

    /// Lets go of `lease`'s conversation after a tool call outside a turn (`engine call
    /// --conversation`), keeping `state`, the conversation's state then (a JSON object):
    /// no turn is recorded, since none ran.
    pub async fn end_call(&self, lease: TurnLease, state: String) -> Result<(), ConversationError> {
        match &self.backend {
            // The engine's own state store is all there is.
            Backend::Memory(_) => {
                let _ = (lease, state);
                Ok(())
            }
            #[cfg(feature = "sqlite")]
            Backend::Sqlite(connection) => {
                let held = Arc::clone(connection);
                let conversation = lease.conversation;
                let ended = blocking(connection, move |connection| {
                    let transaction = connection.transaction().map_err(sql)?;
                    keep_state_and_let_go(transaction, &held.holder, &conversation, &state)
                })
                .await;
                released(ended, lease.hold)
            }
            #[cfg(feature = "postgres")]
            Backend::Postgres(database) => match lease.lock {
                Some(lock) => Ok(database.end_call(lock, &state).await?),
                None => Ok(()),
            },
        }
    }

    /// The turns of `conversation` the store recorded, oldest first (none in memory).
    pub async fn turns(&self, conversation: &str) -> Result<Vec<TurnRecord>, ConversationError> {
        match &self.backend {
            Backend::Memory(_) => {
                let _ = conversation;
                Ok(Vec::new())
            }
            #[cfg(feature = "sqlite")]
            Backend::Sqlite(connection) => {
                let conversation = conversation.to_owned();
                blocking(connection, move |connection| {
                    let mut statement = connection
                        .prepare_cached(
                            "SELECT stop, cost_usd, model_requests FROM turns
                             WHERE conversation = ?1 ORDER BY rowid",
                        )
                        .map_err(sql)?;
                    let rows = statement
                        .query_map([&conversation], |row| {
                            Ok(TurnRecord {
                                stop: row.get(0)?,
                                cost_usd: row.get(1)?,
                                model_requests: row.get(2)?,
                                replica: None,
                            })
                        })
                        .map_err(sql)?;
                    rows.map(|row| row.map_err(sql)).collect()
                })
                .await
            }
            #[cfg(feature = "postgres")]
            Backend::Postgres(database) => Ok(database.turns(conversation).await?),
        }
    }
}

impl Conversations {
    /// Records that the action of `record` (staged by its call) is about to be performed
    /// in `lease`'s turn: its number, for [`Conversations::settle_action`]. In a shared
    /// database this claims it: refused when the turn no longer holds its conversation
    /// (its connection to the database was lost) or the call's action was claimed.
    pub async fn record_action(
        &self,
        lease: &mut TurnLease,
        record: ActionRecord,
    ) -> Result<i64, ConversationError> {
        let conversation = lease.conversation.as_str();
        match &self.backend {
            Backend::Memory(all) => {
                let mut all = all.lock().expect("no panic holds the lock");
                let id = all.actions.len() as i64 + 1;
                all.actions.push((
                    conversation.to_owned(),
                    ActionRecord {
                        id,
                        state: ActionState::Performing,
                        ..record
                    },
                ));
                Ok(id)
            }
            #[cfg(feature = "sqlite")]
            Backend::Sqlite(connection) => {
                let conversation = conversation.to_owned();
                blocking(connection, move |connection| {
                    connection
                        .execute(
                            "INSERT INTO actions (conversation, call_id, action, arguments, subscriber, state, position)
                             VALUES (?1, ?2, ?3, ?4, ?5, 'performing', ?6)",
                            rusqlite::params![
                                conversation,
                                record.call_id,
                                record.action,
                                record.arguments,
                                record.subscriber,
                                record.position.map(|at| at as i64),
                            ],
                        )
                        .map_err(sql)?;
                    Ok(connection.last_insert_rowid())
                })
                .await
            }
            #[cfg(feature = "postgres")]
            Backend::Postgres(database) => {
                let lock = lease.lock.as_mut().ok_or_else(|| {
                    ConversationError("the turn holds no lock on its conversation".into())
                })?;
                let not_claimed = |why: &dyn std::fmt::Display| {
                    ConversationError(format!(
                        "the action of `{}` was not claimed: {why}",
                        record.call_id
                    ))
                };
                database
                    .record_action(lock, &record)
                    .await
                    .map_err(|error| not_claimed(&error))?
                    .ok_or_else(|| {
                        not_claimed(&"this turn no longer holds its conversation, or the action was claimed already")
                    })
            }
        }
    }

    /// Records how the action numbered `id` ended.
    pub async fn settle_action(
        &self,
        id: i64,
        state: ActionState,
        detail: Option<String>,
    ) -> Result<(), ConversationError> {
        match &self.backend {
            Backend::Memory(all) => {
                let mut all = all.lock().expect("no panic holds the lock");
                if let Some((_, record)) = all.actions.iter_mut().find(|(_, r)| r.id == id) {
                    record.state = state;
                    record.detail = detail;
                }
                Ok(())
            }
            #[cfg(feature = "sqlite")]
            Backend::Sqlite(connection) => {
                blocking(connection, move |connection| {
                    connection
                        .execute(
                            "UPDATE actions SET state = ?2, detail = ?3 WHERE id = ?1",
                            rusqlite::params![id, state.as_str(), detail],
                        )
                        .map(drop)
                        .map_err(sql)
                })
                .await
            }
            #[cfg(feature = "postgres")]
            Backend::Postgres(database) => {
                Ok(database.settle_action(id, state, detail.as_deref()).await?)
            }
        }
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
        let moved = || {
            ConversationError(format!(
                "the answer to `{call_id}` is not at {position} in `{conversation}`"
            ))
        };
        match &self.backend {
            Backend::Memory(all) => {
                let mut all = all.lock().expect("no panic holds the lock");
                let held = all
                    .messages
                    .get_mut(conversation)
                    .and_then(|messages| messages.get_mut(position))
                    .filter(
                        |held| matches!(held, Message::Tool { call_id: id, .. } if id == call_id),
                    )
                    .ok_or_else(moved)?;
                *held = answer.clone();
                Ok(())
            }
            #[cfg(feature = "sqlite")]
            Backend::Sqlite(connection) => {
                let error = moved();
                let (conversation, call_id) = (conversation.to_owned(), call_id.clone());
                let body = serde_json::to_string(answer).expect("a message serializes");
                blocking(connection, move |connection| {
                    let changed = connection
                        .execute(
                            "UPDATE messages SET body = ?3
                             WHERE conversation = ?1 AND seq = ?2
                               AND json_extract(body, '$.role') = 'tool'
                               AND json_extract(body, '$.call_id') = ?4",
                            rusqlite::params![conversation, position as i64, body, call_id],
                        )
                        .map_err(sql)?;
                    if changed == 1 {
                        Ok(())
                    } else {
                        Err(error)
                    }
                })
                .await
            }
            #[cfg(feature = "postgres")]
            Backend::Postgres(database) => {
                let body = serde_json::to_string(answer).expect("a message serializes");
                if database
                    .replace_answer(conversation, position, call_id, &body)
                    .await?
                {
                    Ok(())
                } else {
                    Err(moved())
                }
            }
        }
    }

    /// The actions performed in `conversation`, oldest first.
    pub async fn actions(
        &self,
        conversation: &str,
    ) -> Result<Vec<ActionRecord>, ConversationError> {
        match &self.backend {
            Backend::Memory(all) => Ok(all
                .lock()
                .expect("no panic holds the lock")
                .actions
                .iter()
                .filter(|(held, _)| held == conversation)
                .map(|(_, record)| record.clone())
                .collect()),
            #[cfg(feature = "sqlite")]
            Backend::Sqlite(connection) => {
                let conversation = conversation.to_owned();
                blocking(connection, move |connection| {
                    let mut statement = connection
                        .prepare_cached(
                            "SELECT id, call_id, action, arguments, subscriber, state, detail, position
                             FROM actions WHERE conversation = ?1 ORDER BY id",
                        )
                        .map_err(sql)?;
                    let rows = statement
                        .query_map([&conversation], |row| {
                            Ok(ActionRecord {
                                id: row.get(0)?,
                                call_id: row.get(1)?,
                                action: row.get(2)?,
                                arguments: row.get(3)?,
                                subscriber: row.get(4)?,
                                state: ActionState::parse(&row.get::<_, String>(5)?),
                                detail: row.get(6)?,
                                position: row.get::<_, Option<i64>>(7)?.map(|at| at as u64),
                            })
                        })
                        .map_err(sql)?;
                    rows.map(|row| row.map_err(sql)).collect()
                })
                .await
            }
            #[cfg(feature = "postgres")]
            Backend::Postgres(database) => Ok(database.actions(conversation).await?),
        }
    }
}

#[cfg(feature = "sqlite")]
fn parse_message(body: &str) -> Result<Message, ConversationError> {
    serde_json::from_str(body)
        .map_err(|error| ConversationError(format!("a stored message is unreadable: {error}")))
}

/// A number for this process's next turn, which the replica's name makes unique.
#[cfg(feature = "postgres")]
fn next_turn() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

#[cfg(feature = "postgres")]
impl From<DatabaseError> for ConversationError {
    fn from(error: DatabaseError) -> Self {
        Self(error.to_string())
    }
}

/// Each message as the store keeps it.
#[cfg(feature = "sqlite")]
fn bodies(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .map(|message| serde_json::to_string(message).expect("a message serializes"))
        .collect()
}

/// A turn's step would start past the conversation's end.
fn a_gap(at: usize) -> ConversationError {
    ConversationError(format!(
        "the conversation has fewer than {at} messages: this turn's steps would leave a gap"
    ))
}

/// A turn's step met another message where it would store its own.
fn not_this_turns(at: usize) -> ConversationError {
    ConversationError(format!(
        "the conversation's message {at} is not the one this turn stores: another turn wrote it"
    ))
}

/// Stores `state` as `conversation`'s and lets go of it, committing `transaction`: how
/// a turn that keeps its trace ends (after its record) and how a call outside a turn
/// does.
#[cfg(feature = "sqlite")]
fn keep_state_and_let_go(
    transaction: rusqlite::Transaction<'_>,
    holder: &Holder,
    conversation: &str,
    state: &str,
) -> Result<(), ConversationError> {
    transaction
        .execute(
            "INSERT INTO states (conversation, body) VALUES (?1, ?2)
             ON CONFLICT (conversation) DO UPDATE SET body = excluded.body",
            rusqlite::params![conversation, state],
        )
        .map_err(sql)?;
    holder.end(&transaction, conversation).map_err(sql)?;
    transaction.commit().map_err(sql)
}

/// `ended`, with `hold` marked released when the end let go in its transaction; if it
/// failed, the hold's drop lets go.
#[cfg(feature = "sqlite")]
fn released(
    ended: Result<(), ConversationError>,
    hold: Option<SqliteHold>,
) -> Result<(), ConversationError> {
    if let (Ok(()), Some(mut hold)) = (&ended, hold) {
        hold.released = true;
    }
    ended
}

#[cfg(feature = "sqlite")]
fn sql(error: rusqlite::Error) -> ConversationError {
    ConversationError(format!("the conversation database failed: {error}"))
}

/// A process that died while an action ran left it `performing`: it may or may not have
/// taken effect, and it is never run again. An action of a conversation a live process's
/// turn holds is under way there, and left alone.
#[cfg(feature = "sqlite")]
fn settle_interrupted(
    connection: &mut rusqlite::Connection,
    holder: &Holder,
) -> Result<(), ConversationError> {
    // One write transaction: no process begins a turn (nor records a perform) between
    // the reading of who holds what and the marking.
    let transaction = connection
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(sql)?;
    let held = holder.held_elsewhere(&transaction).map_err(sql)?;
    let held = serde_json::to_string(&held).expect("strings serialize");
    let interrupted = transaction
        .execute(
            "UPDATE actions SET state = 'unknown', detail = ?1
             WHERE state = 'performing'
               AND conversation NOT IN (SELECT value FROM json_each(?2))",
            [INTERRUPTED, &held],
        )
        .map_err(sql)?;
    transaction.commit().map_err(sql)?;
    if interrupted > 0 {
        tracing::warn!(
            actions = interrupted,
            "staged actions were running when the engine stopped: marked unknown, not run again"
        );
    }
    Ok(())
}

/// Runs `work` on the connection on a blocking thread: SQLite's calls block. The first
/// use settles what an earlier process left running.
#[cfg(feature = "sqlite")]
async fn blocking<T: Send + 'static>(
    database: &Arc<Database>,
    work: impl FnOnce(&mut rusqlite::Connection) -> Result<T, ConversationError> + Send + 'static,
) -> Result<T, ConversationError> {
    use std::sync::atomic::Ordering;
    let database = Arc::clone(database);
    tokio::task::spawn_blocking(move || {
        let mut connection = database
            .connection
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        // Best effort: a failure is logged, and never fails the work at hand.
        if !database.settled.swap(true, Ordering::AcqRel) {
            if let Err(error) = settle_interrupted(&mut connection, &database.holder) {
                tracing::error!(%error, "actions an earlier run left performing could not be marked unknown");
            }
        }
        work(&mut connection)
    })
    .await
    .map_err(|error| {
        ConversationError(format!("the conversation store's thread failed: {error}"))
    })?
}

#[cfg(all(test, feature = "sqlite"))]
mod tests {
    use super::*;

    /// Two openings of one file are two processes' stores, as far as turns go: a turn
    /// one holds is busy for the other, and a lease dropped without its end (an end that
    /// failed, a dropped future) lets go all the same.
    #[tokio::test]
    async fn a_turn_held_by_one_opening_of_a_store_is_busy_for_another_until_let_go() {
        let dir = std::env::temp_dir().join(format!("engine-two-stores-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("conversations.sqlite");
        let (first, second) = (
            Conversations::open(&path).unwrap(),
            Conversations::open(&path).unwrap(),
        );
        let lease = first
            .begin_turn("c")
            .await
            .unwrap()
            .expect("the first takes it");
        assert!(
            second.begin_turn("c").await.unwrap().is_none(),
            "taken twice"
        );
        assert!(second.begin_turn("other").await.unwrap().is_some());
        drop(lease);
        let lease = second
            .begin_turn("c")
            .await
            .unwrap()
            .expect("let go by the drop");
        second.end_turn(lease, None).await.unwrap();
        assert!(
            first.begin_turn("c").await.unwrap().is_some(),
            "let go by the end"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn a_store_made_before_positions_gains_them_and_keeps_its_records() {
        let dir = std::env::temp_dir().join(format!("engine-old-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("conversations.sqlite");
        // The actions table as stores kept it before positions.
        rusqlite::Connection::open(&path)
            .unwrap()
            .execute_batch(
                "CREATE TABLE actions (
                     id INTEGER PRIMARY KEY, conversation TEXT NOT NULL, call_id TEXT NOT NULL,
                     action TEXT NOT NULL, arguments TEXT NOT NULL, subscriber TEXT NOT NULL,
                     state TEXT NOT NULL, detail TEXT
                 );
                 INSERT INTO actions (conversation, call_id, action, arguments, subscriber, state)
                 VALUES ('c', 'call_0', 'acme:log', '{}', 'ada', 'performed');",
            )
            .unwrap();
        let store = Conversations::open(&path).unwrap();
        let mut lease = store.begin_turn("c").await.unwrap().unwrap();
        let record = ActionRecord {
            id: 0,
            call_id: "call_0".into(),
            position: Some(4),
            action: "acme:log".into(),
            arguments: "{}".into(),
            subscriber: "ada".into(),
            state: ActionState::Performing,
            detail: None,
        };
        store.record_action(&mut lease, record).await.unwrap();
        let positions: Vec<(String, Option<u64>)> = store
            .actions("c")
            .await
            .unwrap()
            .into_iter()
            .map(|record| (record.call_id, record.position))
            .collect();
        assert_eq!(
            positions,
            [("call_0".to_owned(), None), ("call_0".to_owned(), Some(4))]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
