//! What every store does, whichever the backend: conversations and artifacts here,
//! knowledge and spend ledgers in their own files.

mod knowledge;
mod spend;

pub use knowledge::*;
pub use spend::*;

use engine_core::conversation::{Message, ToolCall, ToolStatus};
use engine_core::provider::Usage;
use engine_core::stores::{ActionRecord, ActionState, Conversations};
use engine_core::{Stop, TurnSummary};
use plugin_sdk::artifacts::{Artifact, ArtifactHandle};

use crate::support::{unique, Stores};

pub fn tool_answer(call_id: &str, content: &str) -> Message {
    Message::Tool {
        call_id: call_id.to_owned(),
        name: "acme__log".to_owned(),
        status: ToolStatus::Ok,
        content: content.to_owned(),
    }
}

pub fn calling(call_id: &str) -> Message {
    Message::Assistant {
        content: String::new(),
        tool_calls: vec![ToolCall {
            id: call_id.to_owned(),
            name: "acme__log".to_owned(),
            arguments: "{}".to_owned(),
            extra: Default::default(),
        }],
        extra: Default::default(),
    }
}

pub fn answered(cost_usd: f64) -> TurnSummary {
    TurnSummary {
        stop: Stop::Answered,
        reply: "done".to_owned(),
        usage: Usage {
            input_tokens: 10,
            output_tokens: 5,
        },
        cost_usd,
        model_requests: 2,
    }
}

/// Stores `messages` from position `at` of `conversation`, as one turn's step (the turn
/// begun and ended around it, recording nothing).
pub async fn step(store: &Conversations, conversation: &str, at: usize, messages: &[Message]) {
    let mut lease = store.begin_turn(conversation).await.unwrap().unwrap();
    store.append(&mut lease, at, messages).await.unwrap();
    store.end_turn(lease, None).await.unwrap();
}

pub fn action(call_id: &str) -> ActionRecord {
    ActionRecord {
        id: 0,
        call_id: call_id.to_owned(),
        action: "acme:log".to_owned(),
        arguments: r#"{"note":"x"}"#.to_owned(),
        subscriber: "ada".to_owned(),
        state: ActionState::Performing,
        detail: None,
        position: Some(1),
    }
}

pub fn text(name: &str) -> Artifact {
    Artifact {
        bytes: name.as_bytes().to_vec(),
        filename: format!("{name}.txt"),
        mime: "text/plain".to_owned(),
    }
}

pub async fn history_is_kept_in_order_across_appends(stores: Stores) {
    let store = &stores.conversations;
    let id = unique("c");
    assert_eq!(store.load(&id).await.unwrap(), Vec::new());
    step(store, &id, 0, &[Message::user("one"), calling("k1")]).await;
    step(
        store,
        &id,
        2,
        &[tool_answer("k1", "ok"), Message::user("two")],
    )
    .await;
    step(store, &unique("other"), 0, &[Message::user("elsewhere")]).await;
    assert_eq!(
        store.load(&id).await.unwrap(),
        vec![
            Message::user("one"),
            calling("k1"),
            tool_answer("k1", "ok"),
            Message::user("two")
        ]
    );
}

pub async fn a_step_stored_again_is_kept_once_and_another_in_its_place_or_past_the_end_is_refused(
    stores: Stores,
) {
    let store = &stores.conversations;
    let id = unique("c");
    let mut lease = store.begin_turn(&id).await.unwrap().unwrap();
    let first = [Message::user("one"), calling("k1")];
    store.append(&mut lease, 0, &first).await.unwrap();
    // The same step again (its first commit landed, its answer was lost), then with
    // one more message: what is there already is kept once.
    store.append(&mut lease, 0, &first).await.unwrap();
    store
        .append(&mut lease, 1, &[calling("k1"), tool_answer("k1", "ok")])
        .await
        .unwrap();
    let other = store
        .append(&mut lease, 1, &[Message::user("not what is there")])
        .await
        .unwrap_err();
    assert!(
        other
            .to_string()
            .contains("the conversation's message 1 is not the one this turn stores"),
        "{other}"
    );
    let gap = store
        .append(&mut lease, 4, &[Message::user("far out")])
        .await
        .unwrap_err();
    assert!(
        gap.to_string()
            .contains("the conversation has fewer than 4 messages"),
        "{gap}"
    );
    store.end_turn(lease, None).await.unwrap();
    assert_eq!(
        store.load(&id).await.unwrap(),
        vec![Message::user("one"), calling("k1"), tool_answer("k1", "ok")]
    );
}

pub async fn a_conversation_is_its_first_agent_and_subscribers_only(stores: Stores) {
    let store = &stores.conversations;
    let id = unique("c");
    store.claim(&id, "support", "ada").await.unwrap();
    store.claim(&id, "support", "ada").await.unwrap();
    let other_user = store.claim(&id, "support", "bob").await.unwrap_err();
    assert!(
        other_user.to_string().contains("belongs to another"),
        "{other_user}"
    );
    let other_agent = store.claim(&id, "sales", "ada").await.unwrap_err();
    assert!(
        other_agent.to_string().contains("belongs to another"),
        "{other_agent}"
    );
}

pub async fn a_turn_records_its_end_and_the_state_it_left(stores: Stores) {
    let store = &stores.conversations;
    let id = unique("c");
    assert_eq!(store.load_state(&id).await.unwrap(), None);
    let lease = store.begin_turn(&id).await.unwrap().expect("no other turn");
    store
        .end_turn(lease, Some((&answered(0.25), r#"{"step":1}"#.to_owned())))
        .await
        .unwrap();
    let lease = store
        .begin_turn(&id)
        .await
        .unwrap()
        .expect("the first turn ended");
    store
        .end_turn(lease, Some((&answered(0.5), r#"{"step":2}"#.to_owned())))
        .await
        .unwrap();
    assert_eq!(
        store.load_state(&id).await.unwrap().as_deref(),
        Some(r#"{"step":2}"#)
    );
    let turns = store.turns(&id).await.unwrap();
    let seen: Vec<(&str, f64, u32)> = turns
        .iter()
        .map(|turn| (turn.stop.as_str(), turn.cost_usd, turn.model_requests))
        .collect();
    assert_eq!(
        seen,
        vec![
            (r#"{"reason":"answered"}"#, 0.25, 2),
            (r#"{"reason":"answered"}"#, 0.5, 2)
        ]
    );
}

pub async fn a_turn_that_keeps_no_trace_records_nothing(stores: Stores) {
    let store = &stores.conversations;
    let id = unique("c");
    let lease = store.begin_turn(&id).await.unwrap().expect("no other turn");
    store.end_turn(lease, None).await.unwrap();
    assert_eq!(store.turns(&id).await.unwrap(), Vec::new());
    assert_eq!(store.load_state(&id).await.unwrap(), None);
    // And the conversation is free for the next turn.
    let next = store.begin_turn(&id).await.unwrap();
    assert!(next.is_some());
}

pub async fn a_call_outside_a_turn_keeps_its_state_and_records_no_turn(stores: Stores) {
    let store = &stores.conversations;
    let id = unique("c");
    // Held while the call runs, as a turn holds it (the engine keeps this process's
    // calls and turns apart; the store, those of other processes and replicas).
    let lease = store.begin_turn(&id).await.unwrap().expect("no other turn");
    store
        .end_call(lease, r#"{"note":"kept"}"#.to_owned())
        .await
        .unwrap();
    assert_eq!(
        store.load_state(&id).await.unwrap().as_deref(),
        Some(r#"{"note":"kept"}"#)
    );
    assert_eq!(store.turns(&id).await.unwrap(), Vec::new());
    let next = store
        .begin_turn(&id)
        .await
        .unwrap()
        .expect("the call let go");
    store
        .end_call(next, r#"{"note":"again"}"#.to_owned())
        .await
        .unwrap();
    assert_eq!(
        store.load_state(&id).await.unwrap().as_deref(),
        Some(r#"{"note":"again"}"#)
    );
}

pub async fn an_action_is_recorded_before_it_runs_and_settled_after(stores: Stores) {
    let store = &stores.conversations;
    let id = unique("c");
    let mut lease = store.begin_turn(&id).await.unwrap().expect("no other turn");
    let first = store.record_action(&mut lease, action("k1")).await.unwrap();
    // A staging's place in the history is what settles its answer: kept as given, or
    // absent (a record kept before records had positions).
    let second = ActionRecord {
        position: None,
        ..action("k2")
    };
    let second = store.record_action(&mut lease, second).await.unwrap();
    assert_ne!(first, second);
    let recorded = store.actions(&id).await.unwrap();
    assert_eq!(
        recorded
            .iter()
            .map(|record| (record.call_id.as_str(), record.state, record.position))
            .collect::<Vec<_>>(),
        vec![
            ("k1", ActionState::Performing, Some(1)),
            ("k2", ActionState::Performing, None)
        ]
    );
    store
        .settle_action(first, ActionState::Performed, Some("logged".into()))
        .await
        .unwrap();
    store
        .settle_action(second, ActionState::Failed, Some("refused".into()))
        .await
        .unwrap();
    store
        .end_turn(lease, Some((&answered(0.0), "{}".into())))
        .await
        .unwrap();
    let settled = store.actions(&id).await.unwrap();
    assert_eq!(settled[0].state, ActionState::Performed);
    assert_eq!(settled[0].detail.as_deref(), Some("logged"));
    assert_eq!(settled[0].arguments, r#"{"note":"x"}"#);
    assert_eq!(settled[0].subscriber, "ada");
    assert_eq!(settled[1].state, ActionState::Failed);
    assert_eq!(settled[1].detail.as_deref(), Some("refused"));
}

pub async fn an_answer_is_replaced_only_where_it_answers_the_same_call(stores: Stores) {
    let store = &stores.conversations;
    let id = unique("c");
    step(
        store,
        &id,
        0,
        &[
            Message::user("hi"),
            calling("k1"),
            tool_answer("k1", "staged"),
        ],
    )
    .await;
    store
        .replace_answer(&id, 2, &tool_answer("k1", "performed"))
        .await
        .unwrap();
    let wrong_call = store
        .replace_answer(&id, 2, &tool_answer("k9", "performed"))
        .await
        .unwrap_err();
    assert!(
        wrong_call.to_string().contains("is not at 2"),
        "{wrong_call}"
    );
    let not_an_answer = store
        .replace_answer(&id, 0, &tool_answer("k1", "performed"))
        .await
        .unwrap_err();
    assert!(
        not_an_answer.to_string().contains("is not at 0"),
        "{not_an_answer}"
    );
    assert_eq!(
        store.load(&id).await.unwrap()[2],
        tool_answer("k1", "performed")
    );
}

pub async fn an_artifact_is_taken_once_and_only_in_its_conversation(stores: Stores) {
    let store = &stores.artifacts;
    let handle = store.put("c1", text("quote"), None).await.unwrap();
    assert_eq!(store.take("c2", &handle).await.unwrap(), None);
    assert_eq!(
        store.take("c1", &handle).await.unwrap(),
        Some(text("quote"))
    );
    assert_eq!(store.take("c1", &handle).await.unwrap(), None);
    let unknown = ArtifactHandle::new("0".repeat(32));
    assert_eq!(store.take("c1", &unknown).await.unwrap(), None);
}

/// One recorded turn of `conversation` costing `cost_usd`, storing `messages` from `at`.
async fn a_turn(
    store: &Conversations,
    conversation: &str,
    at: usize,
    messages: &[Message],
    cost_usd: f64,
) {
    let mut lease = store.begin_turn(conversation).await.unwrap().unwrap();
    store.append(&mut lease, at, messages).await.unwrap();
    store
        .end_turn(lease, Some((&answered(cost_usd), "{}".to_owned())))
        .await
        .unwrap();
}

pub async fn an_agents_conversations_are_listed_most_recently_active_first_a_page_at_a_time(
    stores: Stores,
) {
    let store = &stores.conversations;
    // Agents of the test's own: the store may hold other tests' conversations.
    let (agent, other) = (unique("agent"), unique("other"));
    let ids: Vec<String> = (0..5).map(|n| unique(&format!("c{n}"))).collect();
    for id in &ids {
        store.claim(id, &agent, "ada").await.unwrap();
    }
    let theirs = unique("c");
    store.claim(&theirs, &other, "bob").await.unwrap();
    a_turn(store, &theirs, 0, &[Message::user("hi")], 1.0).await;
    // c2's turn ends first; then c0's and c1's turns run at once, c1's ending first, so
    // c0's is the last to end though it began first. c3 and c4 have none.
    a_turn(store, &ids[2], 0, &[Message::user("c")], 0.125).await;
    let mut c0 = store.begin_turn(&ids[0]).await.unwrap().unwrap();
    let mut c1 = store.begin_turn(&ids[1]).await.unwrap().unwrap();
    store
        .append(&mut c0, 0, &[Message::user("a"), calling("call_0")])
        .await
        .unwrap();
    store
        .append(&mut c1, 0, &[Message::user("b")])
        .await
        .unwrap();
    store
        .end_turn(c1, Some((&answered(0.5), "{}".to_owned())))
        .await
        .unwrap();
    store
        .end_turn(c0, Some((&answered(0.25), "{}".to_owned())))
        .await
        .unwrap();
    a_turn(store, &ids[0], 2, &[Message::user("a again")], 0.25).await;

    // Pages of two: the second ends on c3, which has no turn, and the third goes on
    // after it among those without one (by id, as bytes).
    let first = store.recent(&agent, 2, None).await.unwrap();
    let listed: Vec<&str> = first.conversations.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(listed, [ids[0].as_str(), ids[1].as_str()]);
    let busiest = &first.conversations[0];
    assert_eq!(
        (
            busiest.subscriber.as_str(),
            busiest.turns,
            busiest.messages,
            busiest.cost_usd
        ),
        ("ada", 2, 3, 0.5)
    );
    // The cursor travels as text and comes back the same.
    let next = first.next.clone().expect("more follow");
    let next = engine_core::stores::RecentCursor::parse(&next.to_string()).unwrap();
    let second = store.recent(&agent, 2, Some(&next)).await.unwrap();
    let listed: Vec<&str> = second.conversations.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(listed, [ids[2].as_str(), ids[3].as_str()]);
    assert_eq!(second.conversations[1].turns, 0);
    let third = store.recent(&agent, 2, second.next.as_ref()).await.unwrap();
    let listed: Vec<&str> = third.conversations.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(listed, [ids[4].as_str()]);
    assert_eq!(third.next, None, "nothing past the last");
    let theirs_listed = store.recent(&other, 10, None).await.unwrap();
    let listed: Vec<&str> = theirs_listed
        .conversations
        .iter()
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(listed, [theirs.as_str()]);
    assert_eq!(theirs_listed.next, None);
}
