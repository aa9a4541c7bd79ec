use super::*;

/// Two openings of one file are two processes' stores, as far as turns go: a turn
/// one holds is busy for the other, and a lease dropped without its end (an end that
/// failed, a dropped future) lets go all the same.
#[tokio::test]
async fn a_turn_held_by_one_opening_of_a_store_is_busy_for_another_until_let_go() {
    let dir = std::env::temp_dir().join(format!("engine-two-stores-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let path = dir.join("conversations.sqlite");
    let (first, second) = (
        crate::open_conversations(&path).unwrap(),
        crate::open_conversations(&path).unwrap(),
    );
    let lease = first
        .begin_turn("c")
        .await
        .unwrap()
        .expect("the first takes it");
    assert!(
        second.begin_turn("c").await.unwrap().is_none(),
        "taken twice"
    );
    assert!(second.begin_turn("other").await.unwrap().is_some());
    drop(lease);
    let lease = second
        .begin_turn("c")
        .await
        .unwrap()
        .expect("let go by the drop");
    second.end_turn(lease, None).await.unwrap();
    assert!(
        first.begin_turn("c").await.unwrap().is_some(),
        "let go by the end"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_store_made_before_positions_gains_them_and_keeps_its_records() {
    let dir = std::env::temp_dir().join(format!("engine-old-store-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("conversations.sqlite");
    // The actions table as stores kept it before positions.
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(
            "CREATE TABLE actions (
                 id INTEGER PRIMARY KEY, conversation TEXT NOT NULL, call_id TEXT NOT NULL,
                 action TEXT NOT NULL, arguments TEXT NOT NULL, subscriber TEXT NOT NULL,
                 state TEXT NOT NULL, detail TEXT
             );
             INSERT INTO actions (conversation, call_id, action, arguments, subscriber, state)
             VALUES ('c', 'call_0', 'acme:log', '{}', 'ada', 'performed');",
        )
        .unwrap();
    let store = crate::open_conversations(&path).unwrap();
    let mut lease = store.begin_turn("c").await.unwrap().unwrap();
    let record = ActionRecord {
        id: 0,
        call_id: "call_0".into(),
        position: Some(4),
        action: "acme:log".into(),
        arguments: "{}".into(),
        subscriber: "ada".into(),
        state: ActionState::Performing,
        detail: None,
    };
    store.record_action(&mut lease, record).await.unwrap();
    let positions: Vec<(String, Option<u64>)> = store
        .actions("c")
        .await
        .unwrap()
        .into_iter()
        .map(|record| (record.call_id, record.position))
        .collect();
    assert_eq!(
        positions,
        [("call_0".to_owned(), None), ("call_0".to_owned(), Some(4))]
    );
    let _ = std::fs::remove_dir_all(&dir);
}
