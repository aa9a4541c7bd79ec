//! A turn's staged actions on PostgreSQL: each claimed on the turn's own locked
//! connection before it runs, settled after, its answer in the history rewritten, and
//! read back for the conversation.

use super::TurnLock;
use crate::{DatabaseError, Postgres};
use engine_core::stores::{ActionRecord, ActionState};

impl Postgres {
    /// Claims the action of `record` for `lock`'s turn, on the lock's own connection: if
    /// that connection is gone, so is the lock, and nothing is claimed. `None` when the
    /// turn no longer holds its conversation, or the call's action was claimed already.
    pub(crate) async fn record_action(
        &self,
        lock: &mut TurnLock,
        record: &ActionRecord,
    ) -> Result<Option<i64>, DatabaseError> {
        let TurnLock {
            turn,
            conversation,
            connection,
        } = lock;
        let Some(connection) = connection.as_mut() else {
            return Ok(None);
        };
        self.bounded(async {
            let row = connection
                .query_opt(
                    "INSERT INTO actions (conversation, turn, call_id, action, arguments,
                                          subscriber, state, position)
                     SELECT $1, $2, $3, $4, $5, $6, 'performing', $7
                     WHERE EXISTS (
                         SELECT 1 FROM running_turns WHERE conversation = $1 AND turn = $2
                     )
                     ON CONFLICT (turn, call_id) DO NOTHING
                     RETURNING id",
                    &[
                        &*conversation,
                        &*turn,
                        &record.call_id,
                        &record.action,
                        &record.arguments,
                        &record.subscriber,
                        &record.position.map(|at| at as i64),
                    ],
                )
                .await?;
            Ok(row.map(|row| row.get(0)))
        })
        .await
    }

    pub(crate) async fn settle_action(
        &self,
        id: i64,
        state: ActionState,
        detail: Option<&str>,
    ) -> Result<(), DatabaseError> {
        self.bounded(async {
            self.connection()
                .await?
                .execute(
                    "UPDATE actions SET state = $2, detail = $3 WHERE id = $1",
                    &[&id, &state.as_str(), &detail],
                )
                .await?;
            Ok(())
        })
        .await
    }

    /// Replaces the message at `position` with `body` if it answers `call_id`: whether
    /// it did.
    pub(crate) async fn replace_answer(
        &self,
        conversation: &str,
        position: usize,
        call_id: &str,
        body: &str,
    ) -> Result<bool, DatabaseError> {
        let position = i32::try_from(position).unwrap_or(i32::MAX);
        self.bounded(async {
            let changed = self
                .connection()
                .await?
                .execute(
                    "UPDATE messages SET body = $3
                     WHERE conversation = $1 AND seq = $2
                       AND body::jsonb ->> 'role' = 'tool'
                       AND body::jsonb ->> 'call_id' = $4",
                    &[&conversation, &position, &body, &call_id],
                )
                .await?;
            Ok(changed == 1)
        })
        .await
    }

    pub(crate) async fn actions(
        &self,
        conversation: &str,
    ) -> Result<Vec<ActionRecord>, DatabaseError> {
        self.settle_for_reader(conversation).await;
        self.bounded(async {
            let rows = self
                .connection()
                .await?
                .query(
                    "SELECT id, call_id, action, arguments, subscriber, state, detail, position
                     FROM actions WHERE conversation = $1 ORDER BY id",
                    &[&conversation],
                )
                .await?;
            Ok(rows
                .iter()
                .map(|row| ActionRecord {
                    id: row.get(0),
                    call_id: row.get(1),
                    action: row.get(2),
                    arguments: row.get(3),
                    subscriber: row.get(4),
                    state: ActionState::parse(row.get(5)),
                    detail: row.get(6),
                    position: row.get::<_, Option<i64>>(7).map(|at| at as u64),
                })
                .collect())
        })
        .await
    }
}
