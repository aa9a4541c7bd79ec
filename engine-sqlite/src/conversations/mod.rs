//! Conversations in SQLite: `conversations.sqlite` under the data directory, WAL, one
//! transaction per step, so a crash loses at most the step under way and never leaves a
//! tool call without its answer. Several processes may open one file: a turn's hold on
//! its conversation is a row other openings see ([`Holder`]).

use std::sync::{Arc, Mutex};

use plugin_sdk::engine::BoxFuture;

use engine_core::conversation::Message;
use engine_core::provider::Usage;
use engine_core::stores::conversations::{
    a_gap, bodies, not_this_turns, parse_message, ConversationStore, Owner, TurnLease,
};
use engine_core::stores::{
    ActionRecord, ActionState, ConversationError, ConversationPage, ConversationSummary,
    RecentCursor, TurnRecord,
};
use engine_core::TurnSummary;

use crate::holder::Holder;

mod database;
mod schema;
#[cfg(test)]
mod tests;

use database::{blocking, sql, Database};

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
        // the conversation begins only after this (the turn's `Running` marker is let go later), and
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
        schema::create(&connection)?;
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
                        "SELECT stop, cost_usd, model_requests, input_tokens, output_tokens
                         FROM turns WHERE conversation = ?1 ORDER BY rowid",
                    )
                    .map_err(sql)?;
                let rows = statement
                    .query_map([&conversation], |row| {
                        Ok(TurnRecord {
                            stop: row.get(0)?,
                            usage: Usage {
                                input_tokens: row.get::<_, i64>(3)? as u64,
                                output_tokens: row.get::<_, i64>(4)? as u64,
                            },
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

    fn recent<'a>(
        &'a self,
        agent: &'a str,
        limit: usize,
        after: Option<&'a RecentCursor>,
    ) -> BoxFuture<'a, Result<ConversationPage, ConversationError>> {
        let connection = &self.database;
        Box::pin(async move {
            let agent = agent.to_owned();
            // No cursor reads from the top: after every turn, before every id.
            let (turn, id) = after.map_or((i64::MAX, String::new()), |after| {
                (after.turn, after.id.clone())
            });
            blocking(connection, move |connection| {
                // A turn's rowid is the order it was recorded in; ids compared as bytes.
                let mut statement = connection
                    .prepare_cached(
                        "SELECT conversation, subscriber, last, turns, messages, cost FROM (
                             SELECT o.conversation, o.subscriber,
                                 COALESCE((SELECT MAX(rowid) FROM turns t
                                           WHERE t.conversation = o.conversation), 0) AS last,
                                 (SELECT COUNT(*) FROM turns t
                                  WHERE t.conversation = o.conversation) AS turns,
                                 (SELECT COUNT(*) FROM messages m
                                  WHERE m.conversation = o.conversation) AS messages,
                                 COALESCE((SELECT SUM(cost_usd) FROM turns t
                                           WHERE t.conversation = o.conversation), 0.0) AS cost
                             FROM owners o WHERE o.agent = ?1
                         )
                         WHERE last < ?2 OR (last = ?2 AND conversation > ?3)
                         ORDER BY last DESC, conversation ASC
                         LIMIT ?4",
                    )
                    .map_err(sql)?;
                let rows = statement
                    .query_map(
                        rusqlite::params![agent, turn, id, (limit + 1) as i64],
                        |row| {
                            Ok((
                                row.get::<_, i64>(2)?,
                                ConversationSummary {
                                    id: row.get(0)?,
                                    subscriber: row.get(1)?,
                                    turns: row.get(3)?,
                                    messages: row.get(4)?,
                                    cost_usd: row.get(5)?,
                                },
                            ))
                        },
                    )
                    .map_err(sql)?;
                let rows = rows
                    .map(|row| row.map_err(sql))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(ConversationPage::rows(rows, limit))
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
