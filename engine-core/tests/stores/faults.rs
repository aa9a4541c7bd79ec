//! The database's faults: gone (calls fail clearly, and succeed again once it is back,
//! on the same stores), slow (bounded by the timeout), or newer than the engine.

use std::time::Duration;

use engine_core::config::DatabaseConfig;
use engine_core::conversation::Message;
use engine_postgres::{Postgres, SCHEMA_VERSION};
use plugin_sdk::artifacts::ArtifactError;

use crate::replicas::wait_for_turn;
use crate::suite::{step, text};
use crate::support::{fresh_database, replica, session, unique, Relay};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_that_goes_away_fails_calls_clearly_and_serves_again_when_back() {
    let relay = Relay::start().await;
    let database = DatabaseConfig {
        timeout_ms: 1000,
        ..relay.through(&fresh_database().await)
    };
    let stores = replica(&database).await;
    let id = unique("c");
    step(&stores.conversations, &id, 0, &[Message::user("before")]).await;
    let mut cut = stores.conversations.begin_turn(&id).await.unwrap().unwrap();

    relay.down();
    let failed = stores
        .conversations
        .load(&id)
        .await
        .unwrap_err()
        .to_string();
    assert!(failed.contains("the database is unavailable"), "{failed}");
    let failed = stores
        .conversations
        .append(&mut cut, 1, &[Message::user("lost?")])
        .await
        .unwrap_err()
        .to_string();
    assert!(failed.contains("the database is unavailable"), "{failed}");
    drop(cut);
    let put = stores
        .artifacts
        .put("c", text("x"), None)
        .await
        .unwrap_err();
    assert!(matches!(put, ArtifactError::Unavailable(_)), "{put:?}");
    assert!(stores.conversations.begin_turn(&id).await.is_err());

    relay.up().await;
    // The turn cut with the database is let go with its connection; the next begins.
    let mut lease = wait_for_turn(&stores.conversations, &id).await;
    stores
        .conversations
        .append(&mut lease, 1, &[Message::user("after")])
        .await
        .unwrap();
    stores.conversations.end_turn(lease, None).await.unwrap();
    assert_eq!(
        stores.conversations.load(&id).await.unwrap(),
        vec![Message::user("before"), Message::user("after")],
        "nothing the failed append held was kept"
    );
    let handle = stores.artifacts.put("c", text("x"), None).await.unwrap();
    assert!(stores.artifacts.take("c", &handle).await.unwrap().is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_database_is_bounded_by_the_timeout() {
    // Long enough that the set-up below (a turn begun, on a loaded machine) never meets
    // it; what is checked is that the engine's own bound ends the blocked step.
    let database = DatabaseConfig {
        timeout_ms: 2000,
        ..fresh_database().await
    };
    let stores = replica(&database).await;
    let id = unique("c");
    let mut lease = stores.conversations.begin_turn(&id).await.unwrap().unwrap();
    let mut blocker = session(&database).await;
    let holding = blocker.transaction().await.unwrap();
    holding
        .batch_execute("LOCK TABLE messages IN ACCESS EXCLUSIVE MODE")
        .await
        .unwrap();
    let slow = stores
        .conversations
        .append(&mut lease, 0, &[Message::user("waits")])
        .await
        .unwrap_err()
        .to_string();
    // Only the engine's bound says so: the lock would have held the step for ever.
    assert!(slow.contains("did not answer within 2000 ms"), "{slow}");
    // The server gives the statement up too (its statement_timeout is the engine's
    // bound): soon no session of the engine waits for the lock, while it is still held.
    let observer = session(&database).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let waiting: i64 = observer
            .query_one(
                "SELECT count(*) FROM pg_stat_activity
                 WHERE datname = current_database() AND application_name = 'engine'
                   AND wait_event_type = 'Lock'",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        if waiting == 0 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "a statement the engine gave up still waits on the server"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    holding.rollback().await.unwrap();
    // Serving again: the first call may need a new connection, whose set-up alone can
    // take longer than the 300 ms bound on a loaded machine; it is bounded, not lost.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let loaded = loop {
        match stores.conversations.load(&id).await {
            Ok(loaded) => break loaded,
            Err(error) => assert!(
                std::time::Instant::now() < deadline,
                "the store does not serve again: {error}"
            ),
        }
    };
    assert_eq!(loaded, Vec::new());
    stores
        .conversations
        .append(&mut lease, 0, &[Message::user("then")])
        .await
        .unwrap();
    stores.conversations.end_turn(lease, None).await.unwrap();
    assert_eq!(
        stores.conversations.load(&id).await.unwrap(),
        vec![Message::user("then")]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_migrated_by_a_newer_engine_is_refused() {
    let database = fresh_database().await;
    drop(replica(&database).await);
    session(&database)
        .await
        .batch_execute("INSERT INTO engine_migrations (version, name) VALUES (999, 'later')")
        .await
        .unwrap();
    let refused = tokio::task::spawn_blocking(move || Postgres::connect(&database))
        .await
        .unwrap()
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains(&format!(
            "at version 999, newer than this engine's {SCHEMA_VERSION}"
        )),
        "{refused}"
    );
}

/// Connects as start-up does, with the password the variable `password_env` holds (or
/// none), and gives the refusal.
fn refused_with(password_env: &str, database: DatabaseConfig) -> String {
    let database = DatabaseConfig {
        password_env: password_env.into(),
        ..database
    };
    Postgres::connect(&database).unwrap_err().to_string()
}

// Plain tests, not Tokio's: the variable is set before any other thread of this process
// exists (nextest gives each test a process of its own), then the runtime is made.
#[test]
fn a_wrong_password_is_refused_at_start_up_saying_so() {
    let variable = "PLUGIN_SDK_WRONG_POSTGRES_PASSWORD";
    std::env::set_var(variable, "not-the-password");
    let database = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(fresh_database());
    let refused = refused_with(variable, database);
    assert!(
        refused.contains("password authentication failed for user"),
        "{refused}"
    );
}

#[test]
fn a_missing_password_is_refused_at_start_up_saying_so() {
    let database = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(fresh_database());
    let refused = refused_with("PLUGIN_SDK_NO_SUCH_PASSWORD", database);
    assert!(refused.contains("password missing"), "{refused}");
}
