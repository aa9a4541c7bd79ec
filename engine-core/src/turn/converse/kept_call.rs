//! A tool call outside a turn that uses and keeps its conversation's state: what lets a
//! person try a state tool call by call (`engine call --conversation`).

use super::held::{Held, NotHeld};
use super::{Runtime, Turn};
use crate::dispatch::{CallError, CallErrorKind};
use crate::stores::Conversations;
use crate::turn::Call;

fn failed(message: String) -> CallError {
    CallError::new(CallErrorKind::Failed, message)
}

impl Runtime {
    /// The call of [`Engine::call_in_conversation`](crate::Engine::call_in_conversation).
    pub(crate) async fn call_in_conversation(
        &self,
        turn: &Turn,
        call: Call<'_>,
    ) -> Result<String, CallError> {
        let Some(id) = turn.conversation() else {
            return self.call(turn, call).await;
        };
        let store = self.conversations.load_full();
        let held = match Held::begin(&self.running, &store, id).await {
            Ok(held) => held,
            Err(NotHeld::Busy(where_)) => {
                return Err(failed(format!(
                "a turn of the conversation `{id}` is under way{where_}: call again once it ends"
            )))
            }
            Err(NotHeld::Failed(error)) => {
                return Err(failed(format!(
                    "the conversation could not be begun: {error}"
                )))
            }
        };
        // One way out: the state to keep, or nothing kept and the conversation let go.
        match self.call_held(turn, call, held.store(), id).await {
            Ok((output, Some(state))) => {
                held.end_call(state).await.map_err(|error| {
                    failed(format!("the call's state could not be kept: {error}"))
                })?;
                Ok(output)
            }
            Ok((output, None)) => {
                held.let_go().await;
                Ok(output)
            }
            Err(error) => {
                held.let_go().await;
                Err(error)
            }
        }
    }

    /// The call, in the held conversation `id` of `store`: its output, and the state to
    /// keep (`None`: nothing to keep).
    async fn call_held(
        &self,
        turn: &Turn,
        call: Call<'_>,
        store: &Conversations,
        id: &str,
    ) -> Result<(String, Option<String>), CallError> {
        // Another's conversation is refused before anything of it is read, as a turn
        // refuses it; one that is no one's becomes the caller's once a call keeps state
        // in it.
        let unclaimed = match turn.subscriber() {
            Some(subscriber) => !store
                .may_continue(id, turn.agent(), subscriber)
                .await
                .map_err(|error| failed(error.to_string()))?,
            None => false,
        };
        self.restore_state(store, id).await.map_err(|error| {
            failed(format!(
                "the conversation's state could not be restored: {error}"
            ))
        })?;
        // An error applied nothing the call wrote (see `call`): nothing to keep.
        let output = self.call(turn, call).await?;
        let state = self.states.snapshot(id);
        if unclaimed {
            // A call that kept nothing in a conversation no one has claims nothing, as
            // a turn that stores nothing does.
            if state.is_empty() {
                return Ok((output, None));
            }
            if let Some(subscriber) = turn.subscriber() {
                store
                    .claim(id, turn.agent(), subscriber)
                    .await
                    .map_err(|error| failed(error.to_string()))?;
            }
        }
        let state = serde_json::to_string(&*state).expect("state serializes");
        Ok((output, Some(state)))
    }
}
