//! Conversations on PostgreSQL. A turn holds its conversation's advisory lock on a
//! connection of its own: no other replica begins a turn there meanwhile, and a replica
//! that dies lets go of it with its connection. What that replica left in
//! `running_turns` is then a turn interrupted: whichever comes first of the next turn,
//! a reader of the conversation's turns or actions, and the sweep every replica runs
//! records it so, and marks the actions it left `performing` unknown, never to be run
//! again.

use deadpool_postgres::Object;
use tokio_postgres::types::ToSql;

use super::{DatabaseError, Postgres};
use engine_core::stores::{
    ConversationPage, ConversationSummary, RecentCursor, TurnRecord, INTERRUPTED,
};

mod actions;
mod sql;

use sql::{
    ABANDONED, APPEND, BEGIN_TURN, CLAIM, END_CALL, END_TURN, END_TURN_UNRECORDED,
    SETTLE_LEFT_BEHIND, TRY_LOCK, UNLOCK,
};

/// What a turn interrupted is recorded with, in the shape of a [`Stop`](crate::engine::Stop).
const INTERRUPTED_STOP: &str = r#"{"reason":"interrupted"}"#;

/// A conversation's lock, held for a turn on a connection taken out of the pool's use.
pub(crate) struct TurnLock {
    turn: String,
    conversation: String,
    connection: Option<Object>,
}

impl Drop for TurnLock {
    /// A turn that did not end (its future was dropped, or ending failed) closes its
    /// connection rather than pooling it: closing is what frees the lock on the server.
    fn drop(&mut self) {
        if let Some(connection) = self.connection.take() {
            drop(Object::take(connection));
        }
    }
}

/// How a turn ended, as [`Postgres::end_turn`] records it.
pub(crate) struct TurnEnded<'a> {
    pub(crate) stop: &'a str,
    pub(crate) input_tokens: i64,
    pub(crate) output_tokens: i64,
    pub(crate) cost_usd: f64,
    pub(crate) model_requests: i32,
    /// The conversation's state (a JSON object), stored with the record.
    pub(crate) state: String,
}

/// What [`BEGIN_TURN`] or [`SETTLE_LEFT_BEHIND`] found, logged.
fn log_left_behind(conversation: &str, row: &tokio_postgres::Row) {
    let (interrupted, unknown): (i64, i64) = (row.get(0), row.get(1));
    if interrupted > 0 {
        tracing::warn!(
            conversation,
            actions_unknown = unknown,
            "the conversation's last turn was interrupted (its replica stopped): recorded so; its actions under way are marked unknown, not run again"
        );
    }
}

/// What a turn whose lock's connection closed is told when it would write.
fn lost_conversation() -> DatabaseError {
    DatabaseError::Unavailable(
        "the turn lost its hold on the conversation (its database connection closed): nothing more of it is stored".into(),
    )
}

impl Postgres {
    pub(crate) async fn claim(
        &self,
        conversation: &str,
        agent: &str,
        subscriber: &str,
    ) -> Result<(String, String), DatabaseError> {
        self.bounded(async {
            let connection = self.connection().await?;
            let claim = connection.prepare_cached(CLAIM).await?;
            let claimed = connection
                .query_opt(&claim, &[&conversation, &agent, &subscriber])
                .await?;
            let row = match claimed {
                Some(row) => row,
                // Another replica claimed it at the same moment: its row was committed
                // after this statement's snapshot, so a statement of its own reads it.
                None => {
                    connection
                        .query_one(
                            "SELECT agent, subscriber FROM owners WHERE conversation = $1",
                            &[&conversation],
                        )
                        .await?
                }
            };
            Ok((row.get(0), row.get(1)))
        })
        .await
    }

    /// Who holds `conversation` (agent, subscriber), if anyone does.
    pub(crate) async fn owner(
        &self,
        conversation: &str,
    ) -> Result<Option<(String, String)>, DatabaseError> {
        self.bounded(async {
            let row = self
                .connection()
                .await?
                .query_opt(
                    "SELECT agent, subscriber FROM owners WHERE conversation = $1",
                    &[&conversation],
                )
                .await?;
            Ok(row.map(|row| (row.get(0), row.get(1))))
        })
        .await
    }

    /// The stored bodies of `conversation`'s messages, oldest first.
    pub(crate) async fn load(&self, conversation: &str) -> Result<Vec<String>, DatabaseError> {
        self.bounded(async {
            let connection = self.connection().await?;
            let load = connection
                .prepare_cached("SELECT body FROM messages WHERE conversation = $1 ORDER BY seq")
                .await?;
            let rows = connection.query(&load, &[&conversation]).await?;
            Ok(rows.iter().map(|row| row.get(0)).collect())
        })
        .await
    }

    /// Stores `bodies` at positions `at`, `at + 1`, ... of `lock`'s conversation, all or
    /// none, on the lock's own connection: a turn that lost its conversation (its
    /// connection closed, so another replica may have taken it over) stores nothing. A
    /// position already holding the same message is left as it is: a step whose commit
    /// landed after the bound gave up on it is not stored twice when the turn tries again.
    pub(crate) async fn append(
        &self,
        lock: &mut TurnLock,
        at: usize,
        bodies: &[String],
    ) -> Result<(), DatabaseError> {
        let TurnLock {
            conversation,
            connection,
            ..
        } = lock;
        let Some(connection) = connection.as_mut() else {
            return Err(lost_conversation());
        };
        let conversation = &*conversation;
        let at = i32::try_from(at)
            .map_err(|_| DatabaseError::Failed("the conversation is too long".into()))?;
        let stored = self
            .bounded(async {
                if connection.is_closed() {
                    return Err(lost_conversation());
                }
                let append = connection.prepare_cached(APPEND).await?;
                let row = connection
                    .query_one(&append, &[&conversation, &at, &bodies])
                    .await?;
                let (clash, past_the_end): (Option<i32>, bool) = (row.get(0), row.get(1));
                match clash {
                    Some(seq) => Err(DatabaseError::Failed(format!(
                        "the conversation's message {seq} is not the one this turn stores: another turn wrote it"
                    ))),
                    None if past_the_end => Err(DatabaseError::Failed(format!(
                        "the conversation has fewer than {at} messages: this turn's steps would leave a gap"
                    ))),
                    None => Ok(()),
                }
            })
            .await;
        match stored {
            // Closed under the step: the lock went with the connection.
            Err(_) if connection.is_closed() => Err(lost_conversation()),
            stored => stored,
        }
    }

    pub(crate) async fn load_state(
        &self,
        conversation: &str,
    ) -> Result<Option<String>, DatabaseError> {
        self.bounded(async {
            let connection = self.connection().await?;
            let load = connection
                .prepare_cached("SELECT body FROM states WHERE conversation = $1")
                .await?;
            let row = connection.query_opt(&load, &[&conversation]).await?;
            Ok(row.map(|row| row.get(0)))
        })
        .await
    }

    /// Tries `conversation`'s lock on a connection of the lock pool, for the turn `turn`:
    /// `None` when another session holds it (the connection then goes back to its pool).
    /// Must run inside [`bounded`](Self::bounded): the lock is held by its connection
    /// from the start, so a drop at any point (the bound passing mid-query included)
    /// closes the connection, and with it any lock taken.
    async fn try_lock(
        &self,
        conversation: &str,
        turn: &str,
    ) -> Result<Option<TurnLock>, DatabaseError> {
        let mut lock = TurnLock {
            turn: turn.to_owned(),
            conversation: conversation.to_owned(),
            connection: Some(self.lock_connection().await?),
        };
        let connection = lock.connection.as_mut().expect("just set");
        let try_lock = connection.prepare_cached(TRY_LOCK).await?;
        let locked: bool = connection
            .query_one(&try_lock, &[&conversation])
            .await?
            .get(0);
        if !locked {
            drop(lock.connection.take());
            return Ok(None);
        }
        Ok(Some(lock))
    }

    /// Takes `conversation`'s lock for the turn `turn`: `None` when another turn holds
    /// it. A turn its replica left running is recorded interrupted, and its actions left
    /// performing are marked unknown.
    pub(crate) async fn begin_turn(
        &self,
        conversation: &str,
        turn: &str,
    ) -> Result<Option<TurnLock>, DatabaseError> {
        self.bounded(async {
            let Some(mut lock) = self.try_lock(conversation, turn).await? else {
                return Ok(None);
            };
            let connection = lock
                .connection
                .as_mut()
                .expect("a lock holds its connection");
            let begin = connection.prepare_cached(BEGIN_TURN).await?;
            let row = connection
                .query_one(
                    &begin,
                    &[
                        &conversation,
                        &INTERRUPTED_STOP,
                        &INTERRUPTED,
                        &turn,
                        &self.replica,
                    ],
                )
                .await?;
            log_left_behind(conversation, &row);
            Ok(Some(lock))
        })
        .await
    }

    /// Settles what a stopped replica left of `conversation` (the turn it left running
    /// recorded interrupted, the actions it left performing unknown) when a turn of it
    /// is recorded running and no replica holds its lock: so that no reader sees an
    /// action performing that no turn performs any more. A turn under way is left alone.
    pub(crate) async fn settle_abandoned(&self, conversation: &str) -> Result<(), DatabaseError> {
        self.bounded(async {
            let connection = self.connection().await?;
            let abandoned = connection.prepare_cached(ABANDONED).await?;
            let one: Option<&str> = Some(conversation);
            if connection.query_opt(&abandoned, &[&one]).await?.is_none() {
                return Ok(());
            }
            drop(connection);
            let Some(mut lock) = self.try_lock(conversation, "").await? else {
                return Ok(());
            };
            let connection = lock
                .connection
                .as_mut()
                .expect("a lock holds its connection");
            let settle = connection.prepare_cached(SETTLE_LEFT_BEHIND).await?;
            let row = connection
                .query_one(&settle, &[&conversation, &INTERRUPTED_STOP, &INTERRUPTED])
                .await?;
            log_left_behind(conversation, &row);
            let unlock = connection.prepare_cached(UNLOCK).await?;
            connection.execute(&unlock, &[&conversation]).await?;
            // Unlocked: the connection goes back to its pool.
            drop(lock.connection.take());
            Ok(())
        })
        .await
    }

    /// [`settle_abandoned`](Self::settle_abandoned) before a read: one that fails is
    /// logged, and the read goes on with what is stored.
    async fn settle_for_reader(&self, conversation: &str) {
        if let Err(error) = self.settle_abandoned(conversation).await {
            tracing::warn!(conversation, %error, "a turn a stopped replica left could not be settled");
        }
    }

    /// Settles every conversation a stopped replica left a turn running in: what no
    /// later turn or reader of them would. Live turns are not touched, nor their locks.
    pub(crate) async fn sweep(&self) {
        let running = self
            .bounded(async {
                let connection = self.connection().await?;
                let abandoned = connection.prepare_cached(ABANDONED).await?;
                let all: Option<&str> = None;
                let rows = connection.query(&abandoned, &[&all]).await?;
                Ok(rows
                    .iter()
                    .map(|row| row.get::<_, String>(0))
                    .collect::<Vec<_>>())
            })
            .await;
        let running = match running {
            Ok(running) => running,
            Err(error) => {
                tracing::warn!(%error, "the turns stopped replicas left could not be listed");
                return;
            }
        };
        for conversation in running {
            if let Err(error) = self.settle_abandoned(&conversation).await {
                tracing::warn!(conversation, %error, "a turn a stopped replica left could not be settled");
            }
        }
    }

    /// Records how `lock`'s turn ended (unless `ended` is `None`: a turn that keeps no
    /// trace) and lets go of its conversation.
    pub(crate) async fn end_turn(
        &self,
        lock: TurnLock,
        ended: Option<TurnEnded<'_>>,
    ) -> Result<(), DatabaseError> {
        match &ended {
            Some(ended) => {
                let record: [&(dyn ToSql + Sync); 7] = [
                    &ended.stop,
                    &ended.input_tokens,
                    &ended.output_tokens,
                    &ended.cost_usd,
                    &ended.model_requests,
                    &self.replica,
                    &ended.state,
                ];
                self.end_hold(lock, END_TURN, &record).await
            }
            None => self.end_hold(lock, END_TURN_UNRECORDED, &[]).await,
        }
    }

    /// Keeps `state` as the conversation's and lets go of `lock`'s conversation, after a
    /// tool call outside a turn.
    pub(crate) async fn end_call(&self, lock: TurnLock, state: &str) -> Result<(), DatabaseError> {
        self.end_hold(lock, END_CALL, &[&state]).await
    }

    /// Runs `end` (`$1` the conversation, `$2` the holder's id, then `rest`) and unlocks
    /// the conversation, on the lock's own connection: what is recorded is committed (one
    /// statement) before the lock goes, so the next turn, on any replica, finds it.
    async fn end_hold(
        &self,
        mut lock: TurnLock,
        end: &str,
        rest: &[&(dyn ToSql + Sync)],
    ) -> Result<(), DatabaseError> {
        let TurnLock {
            turn,
            conversation,
            connection,
        } = &mut lock;
        let Some(connection) = connection.as_mut() else {
            return Ok(());
        };
        let (turn, conversation) = (&*turn, &*conversation);
        let params: Vec<&(dyn ToSql + Sync)> = [&conversation as &(dyn ToSql + Sync), &turn]
            .into_iter()
            .chain(rest.iter().copied())
            .collect();
        self.bounded(async {
            let end = connection.prepare_cached(end).await?;
            connection.execute(&end, &params).await?;
            let unlock = connection.prepare_cached(UNLOCK).await?;
            connection.execute(&unlock, &[&conversation]).await?;
            Ok(())
        })
        .await?;
        // Unlocked: the connection goes back to its pool.
        drop(lock.connection.take());
        Ok(())
    }

    pub(crate) async fn turns(&self, conversation: &str) -> Result<Vec<TurnRecord>, DatabaseError> {
        self.settle_for_reader(conversation).await;
        self.bounded(async {
            let rows = self
                .connection()
                .await?
                .query(
                    "SELECT stop, cost_usd, model_requests, replica, input_tokens, output_tokens
                     FROM turns WHERE conversation = $1 ORDER BY id",
                    &[&conversation],
                )
                .await?;
            Ok(rows
                .iter()
                .map(|row| TurnRecord {
                    stop: row.get(0),
                    usage: engine_core::provider::Usage {
                        input_tokens: row.get::<_, i64>(4) as u64,
                        output_tokens: row.get::<_, i64>(5) as u64,
                    },
                    cost_usd: row.get(1),
                    model_requests: row.get::<_, i32>(2) as u32,
                    replica: row.get(3),
                })
                .collect())
        })
        .await
    }

    /// `agent`'s conversations, the one whose last turn was recorded most recently
    /// first (a turn's id is the order it was recorded in), after `after`; ids compared
    /// as bytes, as every store compares them.
    pub(crate) async fn recent(
        &self,
        agent: &str,
        limit: usize,
        after: Option<&RecentCursor>,
    ) -> Result<ConversationPage, DatabaseError> {
        let (turn, id) = after.map_or((i64::MAX, String::new()), |after| {
            (after.turn, after.id.clone())
        });
        self.bounded(async {
            let rows = self
                .connection()
                .await?
                .query(
                    "SELECT conversation, subscriber, last, turns, messages, cost FROM (
                         SELECT o.conversation, o.subscriber,
                             COALESCE((SELECT MAX(id) FROM turns t
                                       WHERE t.conversation = o.conversation), 0) AS last,
                             (SELECT COUNT(*) FROM turns t
                              WHERE t.conversation = o.conversation) AS turns,
                             (SELECT COUNT(*) FROM messages m
                              WHERE m.conversation = o.conversation) AS messages,
                             COALESCE((SELECT SUM(cost_usd) FROM turns t
                                       WHERE t.conversation = o.conversation), 0) AS cost
                         FROM owners o WHERE o.agent = $1
                     ) listed
                     WHERE last < $2 OR (last = $2 AND conversation COLLATE \"C\" > $3)
                     ORDER BY last DESC, conversation COLLATE \"C\" ASC
                     LIMIT $4",
                    &[&agent, &turn, &id, &((limit + 1) as i64)],
                )
                .await?;
            let rows = rows
                .iter()
                .map(|row| {
                    (
                        row.get::<_, i64>(2),
                        ConversationSummary {
                            id: row.get(0),
                            subscriber: row.get(1),
                            turns: row.get::<_, i64>(3) as u32,
                            messages: row.get::<_, i64>(4) as u32,
                            cost_usd: row.get(5),
                        },
                    )
                })
                .collect();
            Ok(ConversationPage::rows(rows, limit))
        })
        .await
    }
}
