//! The OAuth broker's grant stores (memory, SQLite, PostgreSQL): a grant kept, replaced
//! and forgotten by its key alone; a sign-in read in place, taken once, and gone once it
//! expired.

use std::sync::Arc;

use engine_core::oauth::{now_secs, GrantKey, GrantStore, MemoryGrants};
use engine_postgres::PostgresGrants;
use engine_sqlite::SqliteGrants;

use crate::support::{connect, fresh_database, unique};

fn key(subscriber: &str) -> GrantKey {
    GrantKey {
        agent: "bot".into(),
        subscriber: subscriber.into(),
        provider: "calendar:acme".into(),
    }
}

async fn grants_and_sign_ins_are_kept_by_their_keys(store: Arc<dyn GrantStore>) {
    let (ada, eve) = (key("cli/ada"), key("cli/eve"));
    assert_eq!(store.grant(&ada).await.unwrap(), None);
    store.put_grant(&ada, b"sealed-1".to_vec()).await.unwrap();
    store.put_grant(&ada, b"sealed-2".to_vec()).await.unwrap();
    assert_eq!(
        store.grant(&ada).await.unwrap().as_deref(),
        Some(&b"sealed-2"[..])
    );
    assert_eq!(
        store.grant(&eve).await.unwrap(),
        None,
        "another subscriber's is none"
    );
    assert!(store.delete_grant(&ada).await.unwrap());
    assert!(!store.delete_grant(&ada).await.unwrap());
    assert_eq!(store.grant(&ada).await.unwrap(), None);
    let later = now_secs() + 600;
    store
        .put_pending("link:1", b"one".to_vec(), later)
        .await
        .unwrap();
    assert_eq!(
        store.pending("link:1").await.unwrap().as_deref(),
        Some(&b"one"[..])
    );
    assert_eq!(
        store.pending("link:1").await.unwrap().as_deref(),
        Some(&b"one"[..]),
        "read in place"
    );
    assert_eq!(
        store.take_pending("link:1").await.unwrap().as_deref(),
        Some(&b"one"[..])
    );
    assert_eq!(
        store.take_pending("link:1").await.unwrap(),
        None,
        "taken once"
    );
    // Expired: neither read nor taken, and swept by the next sign-in kept.
    store
        .put_pending("state:2", b"two".to_vec(), now_secs() - 1)
        .await
        .unwrap();
    assert_eq!(store.pending("state:2").await.unwrap(), None);
    store
        .put_pending("state:3", b"three".to_vec(), later)
        .await
        .unwrap();
    assert_eq!(store.take_pending("state:2").await.unwrap(), None);
}

#[tokio::test]
async fn memory() {
    grants_and_sign_ins_are_kept_by_their_keys(Arc::new(MemoryGrants::default())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite() {
    let path = std::env::temp_dir()
        .join(unique("engine-grants"))
        .join("oauth.sqlite");
    let store = SqliteGrants::open(&path).unwrap();
    grants_and_sign_ins_are_kept_by_their_keys(Arc::new(store)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres() {
    let database = connect(&fresh_database().await).await;
    let store = PostgresGrants::new(database);
    grants_and_sign_ins_are_kept_by_their_keys(Arc::new(store)).await;
}
