//! Conversations in SQLite: `conversations.sqlite` under the data directory, WAL, one
//! transaction per step, so a crash loses at most the step under way and never leaves a
//! tool call without its answer. Several processes may open one file: a turn's hold on
//! its conversation is a row other openings see ([`Holder`]).

use std::sync::{Arc, Mutex};

use plugin_sdk::engine::BoxFuture;

use engine_core::conversation::Message;
use engine_core::stores::conversations::{
    a_gap, bodies, not_this_turns, parse_message, ConversationStore, Owner, TurnLease,
};
use engine_core::stores::{ActionRecord, ActionState, ConversationError, TurnRecord, INTERRUPTED};
use engine_core::TurnSummary;

use crate::holder::Holder;

/// How long a step waits for the database while another process writes.
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Conversations kept in a SQLite database.
pub struct SqliteConversations {
    database: Arc<Database>,
}

/// A SQLite store's hold on a conversation for a turn: let go by the turn's end, or, when
/// that end failed or never came (a dropped future), when dropped, so that no other
/// process finds the conversation held while this one lives.
struct SqliteHold {
    database: Arc<Database>,
    conversation: String,
    /// Whether the end let go of it already.
    released: bool,
}

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
struct Database {
    connection: Mutex<rusqlite::Connection>,
    /// Set once the actions an earlier process left `performing` are marked `unknown`:
    /// on this process's first use of the store, not when it opens it, so that `engine
    /// tools` or `check` beside a running `serve` leave its performs alone.
    settled: std::sync::atomic::AtomicBool,
    /// This opening of the store, which other processes' turns see.
    holder: Holder,
}

impl SqliteConversations {
    /// Conversations kept in the SQLite database at `path`, created if missing.
    pub fn open(path: &std::path::Path) -> Result<Self, ConversationError> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|error| {
                ConversationError(format!("cannot create {}: {error}", parent.display()))
            })?;
        }
        let connection = rusqlite::Connection::open(path).map_err(sql)?;
        // The knowledge store's settings: WAL with full syncing, a bounded wait on a lock
        // another process holds.
        crate::knowledge::connections::configure(&connection, BUSY_TIMEOUT).map_err(sql)?;
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
            database: Arc::new(Database {
                connection: Mutex::new(connection),
                settled: Default::default(),
                holder: Holder::new(path)?,
            }),
        })
    }
}

impl ConversationStore for SqliteConversations {
    fn kind(&self) -> &'static str {
        "sqlite"
    }

    fn keeps_state(&self) -> bool {
        true
    }

    fn owner<'a>(
        &'a self,
        conversation: &'a str,
    ) -> BoxFuture<'a, Result<Option<Owner>, ConversationError>> {
        let connection = &self.database;
        Box::pin(async move {
            let conversation = conversation.to_owned();
            blocking(connection, move |connection| {
                use rusqlite::OptionalExtension as _;
                connection
                    .query_row(
                        "SELECT agent, subscriber FROM owners WHERE conversation = ?1",
                        [&conversation],
                        |row| {
                            Ok(Owner {
                                agent: row.get(0)?,
                                subscriber: row.get(1)?,
                            })
                        },
                    )
                    .optional()
                    .map_err(sql)
            })
            .await
        })
    }

    fn claim<'a>(
        &'a self,
        conversation: &'a str,
        owner: &'a Owner,
    ) -> BoxFuture<'a, Result<Owner, ConversationError>> {
        let connection = &self.database;
        Box::pin(async move {
            let (conversation, agent, subscriber) = (
                conversation.to_owned(),
                owner.agent.clone(),
                owner.subscriber.clone(),
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
                        |row| {
                            Ok(Owner {
                                agent: row.get(0)?,
                                subscriber: row.get(1)?,
                            })
                        },
                    )
                    .map_err(sql)
            })
            .await
        })
    }

    fn load<'a>(
        &'a self,
        conversation: &'a str,
    ) -> BoxFuture<'a, Result<Vec<Message>, ConversationError>> {
        let connection = &self.database;
        Box::pin(async move {
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
        })
    }

    fn append<'a>(
        &'a self,
        lease: &'a mut TurnLease,
        at: usize,
        messages: &'a [Message],
    ) -> BoxFuture<'a, Result<(), ConversationError>> {
        let connection = &self.database;
        Box::pin(async move {
            let conversation = lease.conversation();
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
                                .query_row(rusqlite::params![conversation, seq], |row| row.get(0))
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
        })
    }

    fn load_state<'a>(
        &'a self,
        conversation: &'a str,
    ) -> BoxFuture<'a, Result<Option<String>, ConversationError>> {
        let connection = &self.database;
        Box::pin(async move {
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
        })
    }

    fn begin_turn<'a>(
        &'a self,
        conversation: &'a str,
    ) -> BoxFuture<'a, Result<Option<TurnLease>, ConversationError>> {
        let connection = &self.database;
        Box::pin(async move {
            let (held, conversation) = (Arc::clone(connection), conversation.to_owned());
            let begun = blocking(connection, move |connection| {
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
            Ok(begun.map(|conversation| {
                let hold = SqliteHold {
                    database: Arc::clone(connection),
                    conversation: conversation.clone(),
                    released: false,
                };
                TurnLease::holding(conversation, hold)
            }))
        })
    }

    fn end_turn<'a>(
        &'a self,
        lease: TurnLease,
        ended: Option<(&'a TurnSummary, String)>,
    ) -> BoxFuture<'a, Result<(), ConversationError>> {
        let connection = &self.database;
        Box::pin(async move {
            let held = Arc::clone(connection);
            let (conversation, hold) = lease.into_parts::<SqliteHold>();
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
            released(ended, hold)
        })
    }

    fn end_call(
        &self,
        lease: TurnLease,
        state: String,
    ) -> BoxFuture<'_, Result<(), ConversationError>> {
        let connection = &self.database;
        Box::pin(async move {
            let held = Arc::clone(connection);
            let (conversation, hold) = lease.into_parts::<SqliteHold>();
            let ended = blocking(connection, move |connection| {
                let transaction = connection.transaction().map_err(sql)?;
                keep_state_and_let_go(transaction, &held.holder, &conversation, &state)
            })
            .await;
            released(ended, hold)
        })
    }

    fn turns<'a>(
        &'a self,
        conversation: &'a str,
    ) -> BoxFuture<'a, Result<Vec<TurnRecord>, ConversationError>> {
        let connection = &self.database;
        Box::pin(async move {
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
        })
    }

    fn record_action<'a>(
        &'a self,
        lease: &'a mut TurnLease,
        record: ActionRecord,
    ) -> BoxFuture<'a, Result<i64, ConversationError>> {
        let connection = &self.database;
        Box::pin(async move {
            let conversation = lease.conversation();
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
        })
    }

    fn settle_action(
        &self,
        id: i64,
        state: ActionState,
        detail: Option<String>,
    ) -> BoxFuture<'_, Result<(), ConversationError>> {
        let connection = &self.database;
        Box::pin(async move {
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
        })
    }

    fn replace_answer<'a>(
        &'a self,
        conversation: &'a str,
        position: usize,
        call_id: &'a str,
        answer: &'a Message,
    ) -> BoxFuture<'a, Result<bool, ConversationError>> {
        let connection = &self.database;
        Box::pin(async move {
            let (conversation, call_id) = (conversation.to_owned(), call_id.to_owned());
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
                Ok(changed == 1)
            })
            .await
        })
    }

    fn actions<'a>(
        &'a self,
        conversation: &'a str,
    ) -> BoxFuture<'a, Result<Vec<ActionRecord>, ConversationError>> {
        let connection = &self.database;
        Box::pin(async move {
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
        })
    }
}

/// Stores `state` as `conversation`'s and lets go of it, committing `transaction`: how
/// a turn that keeps its trace ends (after its record) and how a call outside a turn
/// does.
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
fn released(
    ended: Result<(), ConversationError>,
    hold: Option<SqliteHold>,
) -> Result<(), ConversationError> {
    if let (Ok(()), Some(mut hold)) = (&ended, hold) {
        hold.released = true;
    }
    ended
}

fn sql(error: rusqlite::Error) -> ConversationError {
    ConversationError(format!("the conversation database failed: {error}"))
}

/// A process that died while an action ran left it `performing`: it may or may not have
/// taken effect, and it is never run again. An action of a conversation a live process's
/// turn holds is under way there, and left alone.
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

#[cfg(test)]
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
            crate::open_conversations(&path).unwrap(),
            crate::open_conversations(&path).unwrap(),
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
        let store = crate::open_conversations(&path).unwrap();
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
