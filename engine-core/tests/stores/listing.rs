//! A knowledge listing past the most one answer holds ([`MAX_ANSWERED_DOCUMENTS`]): every
//! document once, a page at a time, on every backend, each written through its store.

use std::sync::Arc;

use engine_core::config::KnowledgeLimits;
use engine_core::stores::{MemoryKnowledge, MAX_ANSWERED_DOCUMENTS};
use engine_postgres::PostgresKnowledge;
use engine_sqlite::SqliteKnowledge;
use plugin_sdk::engine::{KnowledgeStore, Scope};
use plugin_sdk::knowledge::KnowledgeLevel;

use crate::support::{connect, fresh_database, unique};

/// Writes one document more than a page holds, then lists them all, however large the
/// limit asked for.
async fn every_document_is_listed_once_past_the_maximum(store: Arc<dyn KnowledgeStore>) {
    let scope = Scope::plugin("support", "notes", KnowledgeLevel::Write);
    let count = MAX_ANSWERED_DOCUMENTS + 1;
    for n in 0..count {
        store
            .write(&scope, &format!("doc{n:04}.md"), "x")
            .await
            .unwrap();
    }
    let mut listed = Vec::new();
    let mut after = None;
    let mut pages = 0;
    loop {
        let page = store
            .list(&scope, usize::MAX, after.as_ref())
            .await
            .unwrap();
        let expected = if pages == 0 {
            MAX_ANSWERED_DOCUMENTS
        } else {
            1
        };
        assert_eq!(page.documents.len(), expected, "page {pages}");
        listed.extend(page.documents.into_iter().map(|summary| summary.filename));
        pages += 1;
        match page.next {
            Some(next) => after = Some(next),
            None => break,
        }
    }
    assert_eq!(pages, 2);
    let expected: Vec<String> = (0..count).map(|n| format!("doc{n:04}.md")).collect();
    assert_eq!(listed, expected, "every document once, by name");
}

#[tokio::test]
async fn memory() {
    let store = MemoryKnowledge::new(KnowledgeLimits::default());
    every_document_is_listed_once_past_the_maximum(Arc::new(store)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite() {
    let path = std::env::temp_dir()
        .join(unique("engine-listing"))
        .join("knowledge.sqlite");
    let store = SqliteKnowledge::open(&path, KnowledgeLimits::default()).unwrap();
    every_document_is_listed_once_past_the_maximum(Arc::new(store)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres() {
    let database = connect(&fresh_database().await).await;
    let store = PostgresKnowledge::new(database, KnowledgeLimits::default());
    every_document_is_listed_once_past_the_maximum(Arc::new(store)).await;
}
