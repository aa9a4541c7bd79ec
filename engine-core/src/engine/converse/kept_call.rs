//! A tool call outside a turn that uses and keeps its conversation's state: what lets a
//! person try a state tool call by call (`engine call --conversation`).

use super::{Engine, RunningTurn, Turn};
use crate::dispatch::{CallError, CallErrorKind};
use crate::engine::Call;

impl Engine {
    /// Calls a tool as [`Engine::call`] does, in `turn`'s conversation: with the state
    /// the conversation's tools kept (in an earlier run of the engine too), and keeping
    /// what this call writes there, as a turn would; no turn is recorded. The
    /// conversation is held for the call as a turn holds it, so a call while a turn of
    /// it runs (here or in another process or replica) is refused, and so is a turn
    /// while the call runs. Without a conversation, it is [`Engine::call`].
    pub async fn call_in_conversation(
        &self,
        turn: &Turn,
        call: Call<'_>,
    ) -> Result<String, CallError> {
        let Some(id) = turn.conversation() else {
            return self.call(turn, call).await;
        };
        let failed = |message: String| CallError::new(CallErrorKind::Failed, message);
        let busy = |where_: &str| {
            failed(format!(
                "a turn of the conversation `{id}` is under way{where_}: call again once it ends"
            ))
        };
        let Some(running) = RunningTurn::start(&self.running, id) else {
            return Err(busy(""));
        };
        let store = self.conversations.load_full();
        let lease = match store.begin_turn(id).await {
            Ok(Some(lease)) => lease,
            Ok(None) => return Err(busy(" in another process or replica")),
            Err(error) => {
                return Err(failed(format!(
                    "the conversation could not be begun: {error}"
                )))
            }
        };
        // Another's conversation is refused before anything of it is read, as a turn
        // refuses it; one that is no one's becomes the caller's once a call keeps state
        // in it.
        let owned = match turn.subscriber() {
            Some(subscriber) => store.may_continue(id, turn.agent(), subscriber).await,
            None => Ok(true),
        };
        let unclaimed = match owned {
            Ok(owned) => !owned,
            Err(error) => {
                let _ = store.end_turn(lease, None).await;
                return Err(failed(error.to_string()));
            }
        };
        if let Err(error) = self.restore_state(&store, id).await {
            let _ = store.end_turn(lease, None).await;
            return Err(failed(format!(
                "the conversation's state could not be restored: {error}"
            )));
        }
        let result = self.call(turn, call).await;
        if result.is_err() {
            // Nothing the call wrote was applied (see `call`): only let go.
            let _ = store.end_turn(lease, None).await;
            return result;
        }
        let state = self.states.snapshot(id);
        if unclaimed {
            // A call that kept nothing in a conversation no one has claims nothing, as
            // a turn that stores nothing does.
            if state.is_empty() {
                let _ = store.end_turn(lease, None).await;
                return result;
            }
            if let Some(subscriber) = turn.subscriber() {
                if let Err(error) = store.claim(id, turn.agent(), subscriber).await {
                    let _ = store.end_turn(lease, None).await;
                    return Err(failed(error.to_string()));
                }
            }
        }
        let state = serde_json::to_string(&*state).expect("state serializes");
        let kept = store.end_call(lease, state).await;
        drop(running);
        kept.map_err(|error| failed(format!("the call's state could not be kept: {error}")))?;
        result
    }
}
