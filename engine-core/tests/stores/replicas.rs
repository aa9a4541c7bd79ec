//! Replicas on one PostgreSQL: one history and state, one turn at a time per
//! conversation, a turn left by a replica that died recorded interrupted, an action
//! claimed once, an artifact taken once, and migrations run once.

use std::time::Duration;

use engine_core::config::DatabaseConfig;
use engine_core::conversation::Message;
use engine_core::stores::ActionState;
use engine_postgres::SCHEMA_VERSION;
use futures::future::join_all;

use crate::suite::{action, answered, text};
use crate::support::{fresh_database, replica, session, unique};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_see_one_history_and_state() {
    let database = fresh_database().await;
    let (a, b) = (replica(&database).await, replica(&database).await);
    let id = unique("c");
    let mut lease = a.conversations.begin_turn(&id).await.unwrap().unwrap();
    a.conversations
        .append(&mut lease, 0, &[Message::user("on a")])
        .await
        .unwrap();
    a.conversations
        .end_turn(lease, Some((&answered(0.1), r#"{"cart":3}"#.into())))
        .await
        .unwrap();
    let mut lease = b.conversations.begin_turn(&id).await.unwrap().unwrap();
    assert_eq!(
        b.conversations.load(&id).await.unwrap(),
        vec![Message::user("on a")]
    );
    assert_eq!(
        b.conversations.load_state(&id).await.unwrap().as_deref(),
        Some(r#"{"cart":3}"#)
    );
    b.conversations
        .append(&mut lease, 1, &[Message::user("on b")])
        .await
        .unwrap();
    b.conversations
        .end_turn(lease, Some((&answered(0.2), "{}".into())))
        .await
        .unwrap();
    assert_eq!(a.conversations.load(&id).await.unwrap().len(), 2);
    let replicas: Vec<Option<String>> = a
        .conversations
        .turns(&id)
        .await
        .unwrap()
        .into_iter()
        .map(|turn| turn.replica)
        .collect();
    assert_eq!(replicas.len(), 2);
    assert_ne!(
        replicas[0], replicas[1],
        "each turn names the replica that ran it"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_turn_of_a_conversation_is_refused_on_another_replica_until_the_first_ends() {
    let database = fresh_database().await;
    let (a, b) = (replica(&database).await, replica(&database).await);
    let id = unique("c");
    let lease = a.conversations.begin_turn(&id).await.unwrap().unwrap();
    assert!(b.conversations.begin_turn(&id).await.unwrap().is_none());
    // Another conversation is not held up.
    let elsewhere = b.conversations.begin_turn(&unique("c")).await.unwrap();
    assert!(elsewhere.is_some());
    a.conversations.end_turn(lease, None).await.unwrap();
    assert!(b.conversations.begin_turn(&id).await.unwrap().is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_that_dies_mid_turn_leaves_it_interrupted_and_its_actions_unknown() {
    let database = fresh_database().await;
    let (a, b) = (replica(&database).await, replica(&database).await);
    let id = dies_mid_action(a).await;
    let lease = wait_for_turn(&b.conversations, &id).await;
    let turns = b.conversations.turns(&id).await.unwrap();
    assert_eq!(turns.len(), 1);
    assert_eq!(turns[0].stop, r#"{"reason":"interrupted"}"#);
    let actions = b.conversations.actions(&id).await.unwrap();
    assert_eq!(actions.len(), 1);
    assert_eq!(actions[0].state, ActionState::Unknown);
    assert!(
        actions[0]
            .detail
            .as_deref()
            .unwrap()
            .contains("not run again"),
        "{:?}",
        actions[0].detail
    );
    b.conversations.end_turn(lease, None).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_dead_replica_left_is_settled_when_read_without_another_turn() {
    let database = fresh_database().await;
    let (a, b) = (replica(&database).await, replica(&database).await);
    let id = dies_mid_action(a).await;
    // Once the server has let the lock go, a reader sees the turn as it is.
    let started = std::time::Instant::now();
    let actions = loop {
        let actions = b.conversations.actions(&id).await.unwrap();
        if actions[0].state != ActionState::Performing {
            break actions;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "{actions:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(actions[0].state, ActionState::Unknown);
    let turns = b.conversations.turns(&id).await.unwrap();
    assert_eq!(turns.len(), 1);
    assert_eq!(turns[0].stop, r#"{"reason":"interrupted"}"#);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_sweeps_what_a_dead_one_left_in_conversations_nobody_comes_back_to() {
    let database = DatabaseConfig {
        sweep_secs: 1,
        ..fresh_database().await
    };
    let (a, b) = (replica(&database).await, replica(&database).await);
    let id = dies_mid_action(a).await;
    // b runs a turn of another conversation (its sweep starts with its first), and
    // never reads this one: the database itself shows the sweep's work.
    let elsewhere = b
        .conversations
        .begin_turn(&unique("c"))
        .await
        .unwrap()
        .unwrap();
    b.conversations.end_turn(elsewhere, None).await.unwrap();
    let admin = session(&database).await;
    let started = std::time::Instant::now();
    loop {
        let row = admin
            .query_one(
                "SELECT (SELECT state FROM actions WHERE conversation = $1),
                        (SELECT count(*) FROM turns WHERE conversation = $1
                           AND stop = '{\"reason\":\"interrupted\"}'),
                        (SELECT count(*) FROM running_turns WHERE conversation = $1)",
                &[&id],
            )
            .await
            .unwrap();
        let (state, interrupted, running): (String, i64, i64) =
            (row.get(0), row.get(1), row.get(2));
        if state != "performing" {
            assert_eq!((state.as_str(), interrupted, running), ("unknown", 1, 0));
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "never swept: {state}, {interrupted} interrupted, {running} running"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Whether a claim was refused because the conversation is another's (not for any error).
fn refused_as_anothers(claim: &Result<(), impl std::fmt::Display>) -> bool {
    claim.as_ref().is_err_and(|error| {
        error
            .to_string()
            .contains("belongs to another agent or end user")
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_claiming_a_new_conversation_at_once_agree_on_its_owner() {
    let database = fresh_database().await;
    let (a, b) = (replica(&database).await, replica(&database).await);
    for _ in 0..50 {
        // The same owner twice (a retried request): both claims hold.
        let id = unique("c");
        let (on_a, on_b) = futures::join!(
            a.conversations.claim(&id, "support", "ada"),
            b.conversations.claim(&id, "support", "ada")
        );
        assert!(on_a.is_ok() && on_b.is_ok(), "{on_a:?} {on_b:?}");
        for replica in [&a, &b] {
            let other = replica.conversations.claim(&id, "support", "bob").await;
            assert!(refused_as_anothers(&other), "bob claimed ada's: {other:?}");
        }

        // Two owners at once: exactly one wins, and both replicas say so from then on.
        let id = unique("c");
        let (on_a, on_b) = futures::join!(
            a.conversations.claim(&id, "support", "ada"),
            b.conversations.claim(&id, "support", "bob")
        );
        assert!(
            on_a.is_ok() && refused_as_anothers(&on_b)
                || on_b.is_ok() && refused_as_anothers(&on_a),
            "{on_a:?} {on_b:?}"
        );
        let (owner, loser) = if on_a.is_ok() {
            ("ada", "bob")
        } else {
            ("bob", "ada")
        };
        for replica in [&a, &b] {
            let again = replica.conversations.claim(&id, "support", owner).await;
            assert!(again.is_ok(), "{owner} lost the conversation: {again:?}");
            let refused = replica.conversations.claim(&id, "support", loser).await;
            assert!(
                refused_as_anothers(&refused),
                "{loser} took {owner}'s: {refused:?}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reading_a_conversation_with_a_live_turn_leaves_the_turn_alone_even_with_every_lock_connection_held(
) {
    let database = DatabaseConfig {
        max_connections: 2,
        timeout_ms: 1000,
        ..fresh_database().await
    };
    let (a, b) = (replica(&database).await, replica(&database).await);
    // b's two lock connections are both held by turns: a read must not need a third.
    let (one, two) = (unique("c"), unique("c"));
    let held = (
        b.conversations.begin_turn(&one).await.unwrap().unwrap(),
        b.conversations.begin_turn(&two).await.unwrap().unwrap(),
    );
    let lease = a
        .conversations
        .begin_turn(&unique("c"))
        .await
        .unwrap()
        .unwrap();
    for conversation in [&one, &two] {
        assert_eq!(
            b.conversations.actions(conversation).await.unwrap(),
            Vec::new()
        );
        assert_eq!(
            b.conversations.turns(conversation).await.unwrap(),
            Vec::new()
        );
        assert_eq!(
            a.conversations.turns(conversation).await.unwrap(),
            Vec::new()
        );
    }
    // The live turns were neither recorded interrupted nor held up.
    b.conversations.end_turn(held.0, None).await.unwrap();
    b.conversations.end_turn(held.1, None).await.unwrap();
    a.conversations.end_turn(lease, None).await.unwrap();
    for conversation in [&one, &two] {
        assert_eq!(
            a.conversations.turns(conversation).await.unwrap(),
            Vec::new()
        );
        assert!(a
            .conversations
            .begin_turn(conversation)
            .await
            .unwrap()
            .is_some());
    }
}

/// `replica` begins a turn of a new conversation, claims an action in it, and dies: its
/// process ends, and the lease's connection closes without the turn's end. Answers the
/// conversation.
async fn dies_mid_action(replica: crate::support::Stores) -> String {
    let id = unique("c");
    let mut lease = replica
        .conversations
        .begin_turn(&id)
        .await
        .unwrap()
        .unwrap();
    replica
        .conversations
        .record_action(&mut lease, action("k1"))
        .await
        .unwrap();
    drop(lease);
    drop(replica);
    id
}

/// The database ends the session that holds this test database's one advisory lock (a
/// network partition, an operator), as the other tests' databases on the server hold
/// theirs.
async fn end_lock_sessions(database: &engine_core::config::DatabaseConfig) {
    let admin = session(database).await;
    let ended: Vec<bool> = admin
        .query(
            "SELECT pg_terminate_backend(pid) FROM pg_locks
             WHERE locktype = 'advisory'
               AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert_eq!(ended, [true], "one session held one lock");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_that_lost_its_conversation_stores_nothing_more_of_it() {
    let database = fresh_database().await;
    let (a, b) = (replica(&database).await, replica(&database).await);
    let id = unique("c");
    let mut stale = a.conversations.begin_turn(&id).await.unwrap().unwrap();
    a.conversations
        .append(&mut stale, 0, &[Message::user("on a")])
        .await
        .unwrap();
    end_lock_sessions(&database).await;
    let mut current = wait_for_turn(&b.conversations, &id).await;
    b.conversations
        .append(&mut current, 1, &[Message::user("on b")])
        .await
        .unwrap();
    // a goes on, unaware: none of its steps is stored, wherever it would put them.
    for at in [1, 2] {
        let refused = a
            .conversations
            .append(&mut stale, at, &[Message::user("a again")])
            .await
            .unwrap_err();
        assert!(
            refused
                .to_string()
                .contains("the turn lost its hold on the conversation"),
            "{refused}"
        );
    }
    b.conversations.end_turn(current, None).await.unwrap();
    assert_eq!(
        b.conversations.load(&id).await.unwrap(),
        vec![Message::user("on a"), Message::user("on b")]
    );
}

/// The server sees a closed connection a moment after the client closes it.
pub async fn wait_for_turn(
    store: &engine_core::stores::Conversations,
    id: &str,
) -> engine_core::stores::TurnLease {
    for _ in 0..100 {
        if let Some(lease) = store.begin_turn(id).await.unwrap() {
            return lease;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the conversation was never let go");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_action_is_not_claimed_by_a_turn_that_lost_its_conversation() {
    let database = fresh_database().await;
    let (a, b) = (replica(&database).await, replica(&database).await);
    let id = unique("c");
    let mut stale = a.conversations.begin_turn(&id).await.unwrap().unwrap();
    // The database ends the session that holds the lock (a network partition, an
    // operator): the other replica takes the conversation over.
    end_lock_sessions(&database).await;
    let mut current = wait_for_turn(&b.conversations, &id).await;
    let refused = a
        .conversations
        .record_action(&mut stale, action("k1"))
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("not claimed"), "{refused}");
    b.conversations
        .record_action(&mut current, action("k1"))
        .await
        .unwrap();
    let actions = b.conversations.actions(&id).await.unwrap();
    assert_eq!(
        actions.len(),
        1,
        "only the current turn's claim: {actions:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_artifact_put_on_one_replica_is_taken_once_across_replicas() {
    let database = fresh_database().await;
    let (a, b) = (replica(&database).await, replica(&database).await);
    let mut handles = Vec::new();
    for n in 0..20 {
        handles.push(
            a.artifacts
                .put("c", text(&format!("a{n}")), None)
                .await
                .unwrap(),
        );
    }
    let takes = handles
        .iter()
        .flat_map(|handle| [a.artifacts.take("c", handle), b.artifacts.take("c", handle)]);
    let taken: Vec<bool> = join_all(takes)
        .await
        .into_iter()
        .map(|taken| taken.unwrap().is_some())
        .collect();
    for (n, pair) in taken.chunks(2).enumerate() {
        assert_eq!(
            pair.iter().filter(|taken| **taken).count(),
            1,
            "artifact {n} was taken {pair:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_artifact_is_not_taken_on_any_replica() {
    let database = fresh_database().await;
    let (a, b) = (replica(&database).await, replica(&database).await);
    let handle = a
        .artifacts
        .put("c", text("brief"), Some(Duration::from_millis(50)))
        .await
        .unwrap();
    let lasting = a
        .artifacts
        .put("c", text("lasting"), Some(Duration::from_secs(60)))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(b.artifacts.take("c", &handle).await.unwrap(), None);
    assert_eq!(
        b.artifacts.take("c", &lasting).await.unwrap(),
        Some(text("lasting")),
        "one put with a longer lifetime is still there"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_starting_together_migrate_once() {
    let database = fresh_database().await;
    let starting = (0..4).map(|_| replica(&database));
    let replicas = join_all(starting).await;
    assert_eq!(replicas.len(), 4);
    let admin = session(&database).await;
    let versions: Vec<i32> = admin
        .query(
            "SELECT version FROM engine_migrations ORDER BY version",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert_eq!(versions, (1..=SCHEMA_VERSION).collect::<Vec<_>>());
}
