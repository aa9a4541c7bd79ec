//! The conversation store on the shared database: what every replica's turns read and
//! write, one turn of a conversation at a time across them.

use std::sync::Arc;

use plugin_sdk::engine::BoxFuture;

use super::{DatabaseError, Postgres, TurnEnded, TurnLock};
use engine_core::conversation::Message;
use engine_core::stores::conversations::{
    bodies, parse_message, ConversationStore, Owner, TurnLease,
};
use engine_core::stores::{
    ActionRecord, ActionState, ConversationError, ConversationPage, RecentCursor, TurnRecord,
};
use engine_core::TurnSummary;

/// Conversations kept in the PostgreSQL database replicas share.
pub struct PostgresConversations {
    database: Arc<Postgres>,
}

impl PostgresConversations {
    /// Conversations in `database`.
    pub fn new(database: Arc<Postgres>) -> Self {
        Self { database }
    }
}

impl From<DatabaseError> for ConversationError {
    fn from(error: DatabaseError) -> Self {
        Self(error.to_string())
    }
}

/// A number for this process's next turn, which the replica's name makes unique.
fn next_turn() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

fn owner((agent, subscriber): (String, String)) -> Owner {
    Owner { agent, subscriber }
}

impl ConversationStore for PostgresConversations {
    fn kind(&self) -> &'static str {
        "postgres"
    }

    fn keeps_state(&self) -> bool {
        true
    }

    fn owner<'a>(
        &'a self,
        conversation: &'a str,
    ) -> BoxFuture<'a, Result<Option<Owner>, ConversationError>> {
        Box::pin(async move { Ok(self.database.owner(conversation).await?.map(owner)) })
    }

    fn claim<'a>(
        &'a self,
        conversation: &'a str,
        asked: &'a Owner,
    ) -> BoxFuture<'a, Result<Owner, ConversationError>> {
        Box::pin(async move {
            let held = self
                .database
                .claim(conversation, &asked.agent, &asked.subscriber)
                .await?;
            Ok(owner(held))
        })
    }

    fn load<'a>(
        &'a self,
        conversation: &'a str,
    ) -> BoxFuture<'a, Result<Vec<Message>, ConversationError>> {
        Box::pin(async move {
            self.database
                .load(conversation)
                .await?
                .iter()
                .map(|body| parse_message(body))
                .collect()
        })
    }

    fn append<'a>(
        &'a self,
        lease: &'a mut TurnLease,
        at: usize,
        messages: &'a [Message],
    ) -> BoxFuture<'a, Result<(), ConversationError>> {
        Box::pin(async move {
            let Some(lock) = lease.hold_mut::<TurnLock>() else {
                return Err(ConversationError(
                    "a turn in a shared database stores through its lease".into(),
                ));
            };
            Ok(self.database.append(lock, at, &bodies(messages)).await?)
        })
    }

    fn load_state<'a>(
        &'a self,
        conversation: &'a str,
    ) -> BoxFuture<'a, Result<Option<String>, ConversationError>> {
        Box::pin(async move { Ok(self.database.load_state(conversation).await?) })
    }

    fn begin_turn<'a>(
        &'a self,
        conversation: &'a str,
    ) -> BoxFuture<'a, Result<Option<TurnLease>, ConversationError>> {
        Box::pin(async move {
            self.database.sweep_in_background();
            let turn = format!("{}-{}", self.database.replica(), next_turn());
            let lock = self.database.begin_turn(conversation, &turn).await?;
            Ok(lock.map(|lock| TurnLease::holding(conversation, lock)))
        })
    }

    fn end_turn<'a>(
        &'a self,
        lease: TurnLease,
        ended: Option<(&'a TurnSummary, String)>,
    ) -> BoxFuture<'a, Result<(), ConversationError>> {
        Box::pin(async move {
            let (_, Some(lock)) = lease.into_parts::<TurnLock>() else {
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
            Ok(self.database.end_turn(lock, ended).await?)
        })
    }

    fn end_call(
        &self,
        lease: TurnLease,
        state: String,
    ) -> BoxFuture<'_, Result<(), ConversationError>> {
        Box::pin(async move {
            match lease.into_parts::<TurnLock>() {
                (_, Some(lock)) => Ok(self.database.end_call(lock, &state).await?),
                (_, None) => Ok(()),
            }
        })
    }

    fn turns<'a>(
        &'a self,
        conversation: &'a str,
    ) -> BoxFuture<'a, Result<Vec<TurnRecord>, ConversationError>> {
        Box::pin(async move { Ok(self.database.turns(conversation).await?) })
    }

    fn record_action<'a>(
        &'a self,
        lease: &'a mut TurnLease,
        record: ActionRecord,
    ) -> BoxFuture<'a, Result<i64, ConversationError>> {
        Box::pin(async move {
            let lock = lease.hold_mut::<TurnLock>().ok_or_else(|| {
                ConversationError("the turn holds no lock on its conversation".into())
            })?;
            let not_claimed = |why: &dyn std::fmt::Display| {
                ConversationError(format!(
                    "the action of `{}` was not claimed: {why}",
                    record.call_id
                ))
            };
            self.database
                .record_action(lock, &record)
                .await
                .map_err(|error| not_claimed(&error))?
                .ok_or_else(|| {
                    not_claimed(&"this turn no longer holds its conversation, or the action was claimed already")
                })
        })
    }

    fn settle_action(
        &self,
        id: i64,
        state: ActionState,
        detail: Option<String>,
    ) -> BoxFuture<'_, Result<(), ConversationError>> {
        Box::pin(async move {
            Ok(self
                .database
                .settle_action(id, state, detail.as_deref())
                .await?)
        })
    }

    fn replace_answer<'a>(
        &'a self,
        conversation: &'a str,
        position: usize,
        call_id: &'a str,
        answer: &'a Message,
    ) -> BoxFuture<'a, Result<bool, ConversationError>> {
        Box::pin(async move {
            let body = serde_json::to_string(answer).expect("a message serializes");
            Ok(self
                .database
                .replace_answer(conversation, position, call_id, &body)
                .await?)
        })
    }

    fn actions<'a>(
        &'a self,
        conversation: &'a str,
    ) -> BoxFuture<'a, Result<Vec<ActionRecord>, ConversationError>> {
        Box::pin(async move { Ok(self.database.actions(conversation).await?) })
    }

    fn recent<'a>(
        &'a self,
        agent: &'a str,
        limit: usize,
        after: Option<&'a RecentCursor>,
    ) -> BoxFuture<'a, Result<ConversationPage, ConversationError>> {
        Box::pin(async move { Ok(self.database.recent(agent, limit, after).await?) })
    }
}
