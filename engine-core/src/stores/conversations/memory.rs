//! Conversations in memory: gone when the engine stops, seen by this process only.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use plugin_sdk::engine::BoxFuture;

use super::{
    a_gap, not_this_turns, ConversationPage, ConversationStore, ConversationSummary, Owner,
    RecentCursor, TurnLease,
};
use crate::conversation::Message;
use crate::outcome::TurnSummary;
use crate::stores::records::{ActionRecord, ActionState, ConversationError, TurnRecord};

/// Conversations in memory: their messages, whose each is, their turns, their state and
/// their actions. Within one process the engine keeps a conversation's turns apart, so a
/// turn's lease holds nothing here.
#[derive(Default)]
pub struct MemoryConversations {
    held: Mutex<Held>,
}

#[derive(Default)]
struct Held {
    messages: HashMap<String, Vec<Message>>,
    owners: HashMap<String, Owner>,
    turns: HashMap<String, Vec<TurnRecord>>,
    /// The order of each conversation's last recorded turn (the listing's), from 1.
    last_turn: HashMap<String, i64>,
    turns_recorded: i64,
    states: HashMap<String, String>,
    actions: Vec<(String, ActionRecord)>,
}

impl MemoryConversations {
    fn held(&self) -> MutexGuard<'_, Held> {
        // Every change below is made whole under the lock: a panic leaves nothing half
        // written.
        self.held
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// `value`, as the ready future a trait method returns.
fn ready<'a, T: Send + 'a>(value: T) -> BoxFuture<'a, T> {
    Box::pin(std::future::ready(value))
}

impl ConversationStore for MemoryConversations {
    fn kind(&self) -> &'static str {
        "memory"
    }

    fn keeps_state(&self) -> bool {
        false
    }

    fn owner<'a>(
        &'a self,
        conversation: &'a str,
    ) -> BoxFuture<'a, Result<Option<Owner>, ConversationError>> {
        ready(Ok(self.held().owners.get(conversation).cloned()))
    }

    fn claim<'a>(
        &'a self,
        conversation: &'a str,
        owner: &'a Owner,
    ) -> BoxFuture<'a, Result<Owner, ConversationError>> {
        let mut held = self.held();
        let owner = held
            .owners
            .entry(conversation.to_owned())
            .or_insert_with(|| owner.clone())
            .clone();
        ready(Ok(owner))
    }

    fn load<'a>(
        &'a self,
        conversation: &'a str,
    ) -> BoxFuture<'a, Result<Vec<Message>, ConversationError>> {
        let messages = self.held().messages.get(conversation).cloned();
        ready(Ok(messages.unwrap_or_default()))
    }

    fn append<'a>(
        &'a self,
        lease: &'a mut TurnLease,
        at: usize,
        messages: &'a [Message],
    ) -> BoxFuture<'a, Result<(), ConversationError>> {
        let mut held = self.held();
        let stored = held
            .messages
            .entry(lease.conversation().to_owned())
            .or_default();
        let kept = stored.len().saturating_sub(at).min(messages.len());
        let appended = if stored.len() < at {
            Err(a_gap(at))
        } else if stored[at..at + kept] != messages[..kept] {
            Err(not_this_turns(at))
        } else {
            stored.extend_from_slice(&messages[kept..]);
            Ok(())
        };
        ready(appended)
    }

    fn load_state<'a>(
        &'a self,
        conversation: &'a str,
    ) -> BoxFuture<'a, Result<Option<String>, ConversationError>> {
        ready(Ok(self.held().states.get(conversation).cloned()))
    }

    fn begin_turn<'a>(
        &'a self,
        conversation: &'a str,
    ) -> BoxFuture<'a, Result<Option<TurnLease>, ConversationError>> {
        ready(Ok(Some(TurnLease::new(conversation))))
    }

    fn end_turn<'a>(
        &'a self,
        lease: TurnLease,
        ended: Option<(&'a TurnSummary, String)>,
    ) -> BoxFuture<'a, Result<(), ConversationError>> {
        if let Some((summary, state)) = ended {
            let conversation = lease.conversation().to_owned();
            let mut held = self.held();
            held.turns
                .entry(conversation.clone())
                .or_default()
                .push(TurnRecord {
                    stop: serde_json::to_string(&summary.stop).expect("a stop serializes"),
                    usage: summary.usage,
                    cost_usd: summary.cost_usd,
                    model_requests: summary.model_requests,
                    replica: None,
                });
            held.turns_recorded += 1;
            let order = held.turns_recorded;
            held.last_turn.insert(conversation.clone(), order);
            held.states.insert(conversation, state);
        }
        ready(Ok(()))
    }

    fn end_call(
        &self,
        lease: TurnLease,
        state: String,
    ) -> BoxFuture<'_, Result<(), ConversationError>> {
        self.held()
            .states
            .insert(lease.conversation().to_owned(), state);
        ready(Ok(()))
    }

    fn turns<'a>(
        &'a self,
        conversation: &'a str,
    ) -> BoxFuture<'a, Result<Vec<TurnRecord>, ConversationError>> {
        let turns = self.held().turns.get(conversation).cloned();
        ready(Ok(turns.unwrap_or_default()))
    }

    fn record_action<'a>(
        &'a self,
        lease: &'a mut TurnLease,
        record: ActionRecord,
    ) -> BoxFuture<'a, Result<i64, ConversationError>> {
        let mut held = self.held();
        let id = held.actions.len() as i64 + 1;
        held.actions.push((
            lease.conversation().to_owned(),
            ActionRecord {
                id,
                state: ActionState::Performing,
                ..record
            },
        ));
        ready(Ok(id))
    }

    fn settle_action(
        &self,
        id: i64,
        state: ActionState,
        detail: Option<String>,
    ) -> BoxFuture<'_, Result<(), ConversationError>> {
        let mut held = self.held();
        if let Some((_, record)) = held.actions.iter_mut().find(|(_, r)| r.id == id) {
            record.state = state;
            record.detail = detail;
        }
        ready(Ok(()))
    }

    fn replace_answer<'a>(
        &'a self,
        conversation: &'a str,
        position: usize,
        call_id: &'a str,
        answer: &'a Message,
    ) -> BoxFuture<'a, Result<bool, ConversationError>> {
        let mut held = self.held();
        let there = held
            .messages
            .get_mut(conversation)
            .and_then(|messages| messages.get_mut(position))
            .filter(|held| matches!(held, Message::Tool { call_id: id, .. } if id == call_id));
        let replaced = there.map(|held| *held = answer.clone()).is_some();
        ready(Ok(replaced))
    }

    fn actions<'a>(
        &'a self,
        conversation: &'a str,
    ) -> BoxFuture<'a, Result<Vec<ActionRecord>, ConversationError>> {
        let actions = self
            .held()
            .actions
            .iter()
            .filter(|(held, _)| held == conversation)
            .map(|(_, record)| record.clone())
            .collect();
        ready(Ok(actions))
    }

    fn recent<'a>(
        &'a self,
        agent: &'a str,
        limit: usize,
        after: Option<&'a RecentCursor>,
    ) -> BoxFuture<'a, Result<ConversationPage, ConversationError>> {
        let held = self.held();
        let mut rows: Vec<(i64, ConversationSummary)> = held
            .owners
            .iter()
            .filter(|(_, owner)| owner.agent == agent)
            .map(|(id, owner)| {
                let turns = held.turns.get(id).map_or(&[][..], Vec::as_slice);
                let summary = ConversationSummary {
                    id: id.clone(),
                    subscriber: owner.subscriber.clone(),
                    turns: turns.len() as u32,
                    messages: held.messages.get(id).map_or(0, Vec::len) as u32,
                    cost_usd: turns.iter().map(|turn| turn.cost_usd).sum(),
                };
                (held.last_turn.get(id).copied().unwrap_or(0), summary)
            })
            .filter(|(turn, summary)| {
                after.is_none_or(|after| {
                    *turn < after.turn || (*turn == after.turn && summary.id > after.id)
                })
            })
            .collect();
        rows.sort_by(|(a, first), (b, second)| b.cmp(a).then_with(|| first.id.cmp(&second.id)));
        rows.truncate(limit + 1);
        ready(Ok(ConversationPage::rows(rows, limit)))
    }
}
