//! What every knowledge store does: each agent's documents its own, owners and levels,
//! the limits.

use plugin_sdk::engine::Scope;
use plugin_sdk::knowledge::{KnowledgeLevel, ListCursor, Origin, Refusal, SearchError};

use crate::support::Stores;

fn scope(agent: &str, namespace: &str, level: KnowledgeLevel) -> Scope {
    Scope::plugin(agent, namespace, level)
}

pub async fn knowledge_is_searched_within_the_agents_own_documents(stores: Stores) {
    let store = stores
        .knowledge
        .as_ref()
        .expect("run on a backend with a knowledge store");
    let support = scope("support", "notes", KnowledgeLevel::Write);
    let sales = scope("sales", "notes", KnowledgeLevel::Write);
    let refunds = store
        .write(
            &support,
            "refunds.md",
            "Refunds are paid within 14 days of the return.",
        )
        .await
        .unwrap();
    assert!(refunds.created);
    store
        .write(
            &support,
            "shipping.md",
            "Parcels leave the warehouse every morning.",
        )
        .await
        .unwrap();
    store
        .write(&sales, "refunds.md", "Sales never promise REFUNDS.")
        .await
        .unwrap();
    let hits = store
        .search(&support, "REFUND refunds days", 10)
        .await
        .unwrap();
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0].id, refunds.document.id);
    assert_eq!(hits[0].filename, "refunds.md");
    assert!(hits[0].snippet.contains("14 days"), "{:?}", hits[0].snippet);
    // A word in the filename finds it too; punctuation is no syntax.
    let by_name = store.search(&support, "shipping\" OR *", 10).await.unwrap();
    assert_eq!(by_name.len(), 1, "{by_name:?}");
    assert_eq!(
        store.search(&support, " ,; ", 10).await.unwrap(),
        Vec::new()
    );
    // Another agent's document is neither got nor listed.
    assert_eq!(store.get(&sales, refunds.document.id).await.unwrap(), None);
    let listed: Vec<String> = store
        .list(&support, 10, None)
        .await
        .unwrap()
        .documents
        .into_iter()
        .map(|summary| summary.filename)
        .collect();
    assert_eq!(listed, ["refunds.md", "shipping.md"]);
    let got = store
        .get(&support, refunds.document.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        got.content,
        "Refunds are paid within 14 days of the return."
    );
    assert_eq!(
        (got.origin, got.origin_ref.as_str()),
        (Origin::Plugin, "notes")
    );
}

pub async fn knowledge_below_manage_changes_only_its_plugins_documents(stores: Stores) {
    let store = stores
        .knowledge
        .as_ref()
        .expect("run on a backend with a knowledge store");
    let notes = scope("support", "notes", KnowledgeLevel::Write);
    let crm = scope("support", "crm", KnowledgeLevel::Write);
    let admin = scope("support", "admin", KnowledgeLevel::Manage);
    let written = store.write(&notes, "faq.md", "v1").await.unwrap();
    assert_eq!(
        store.write(&crm, "faq.md", "taken over").await,
        Err(Refusal::NotOwned)
    );
    assert_eq!(
        store.delete(&crm, written.document.id).await,
        Err(Refusal::NotOwned)
    );
    let updated = store.write(&notes, "faq.md", "v2").await.unwrap();
    assert!(!updated.created);
    assert_eq!(updated.document.id, written.document.id);
    let managed = store.write(&admin, "faq.md", "v3").await.unwrap();
    assert_eq!(
        (
            managed.document.origin,
            managed.document.origin_ref.as_str()
        ),
        (Origin::Plugin, "notes"),
        "the owner stays"
    );
    let reader = scope("support", "notes", KnowledgeLevel::Read);
    assert_eq!(
        store.write(&reader, "other.md", "x").await,
        Err(Refusal::NotGranted)
    );
    let deleted = store.delete(&admin, written.document.id).await.unwrap();
    assert_eq!(deleted.document.content, "v3");
    assert_eq!(
        store.delete(&admin, written.document.id).await,
        Err(Refusal::NotFound)
    );
}

pub async fn knowledge_refuses_past_its_limits(stores: Stores) {
    let store = stores
        .knowledge
        .as_ref()
        .expect("run on a backend with a knowledge store");
    let notes = scope("support", "notes", KnowledgeLevel::Write);
    for n in 0..3 {
        store.write(&notes, &format!("{n}.md"), "x").await.unwrap();
    }
    assert_eq!(
        store.write(&notes, "3.md", "x").await,
        Err(Refusal::LimitReached { limit: 3 })
    );
    // Another agent has its own count.
    let other = scope("sales", "notes", KnowledgeLevel::Write);
    store.write(&other, "0.md", "x").await.unwrap();
    assert_eq!(
        store.search(&notes, "one two three four five", 10).await,
        Err(SearchError::TooManyWords { words: 5, limit: 4 })
    );
}

pub async fn knowledge_lists_by_name_and_ranks_more_matches_first_within_the_limit(stores: Stores) {
    let store = stores
        .knowledge
        .as_ref()
        .expect("run on a backend with a knowledge store");
    let notes = scope("support", "notes", KnowledgeLevel::Write);
    // Written out of name order, the weaker match first and first by name: neither the
    // ids, nor the order of writing, nor the names give the search's order.
    let weak = store
        .write(
            &notes,
            "c.md",
            "Refunds are paid once the warehouse has checked the parcel that came back.",
        )
        .await
        .unwrap();
    let strong = store
        .write(&notes, "z.md", "Refunds in days: refunds take days.")
        .await
        .unwrap();
    store
        .write(&notes, "b.md", "Nothing to match.")
        .await
        .unwrap();
    let listed: Vec<String> = store
        .list(&notes, 2, None)
        .await
        .unwrap()
        .documents
        .into_iter()
        .map(|summary| summary.filename)
        .collect();
    assert_eq!(listed, ["b.md", "c.md"]);
    let hits = store.search(&notes, "refunds days", 10).await.unwrap();
    let ids: Vec<i64> = hits.iter().map(|hit| hit.id).collect();
    assert_eq!(ids, [strong.document.id, weak.document.id], "{hits:?}");
    let first = store.search(&notes, "refunds days", 1).await.unwrap();
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].id, strong.document.id);
}

pub async fn knowledge_managed_in_one_agent_reaches_nothing_of_another(stores: Stores) {
    let store = stores
        .knowledge
        .as_ref()
        .expect("run on a backend with a knowledge store");
    let support = scope("support", "notes", KnowledgeLevel::Write);
    let sales_admin = scope("sales", "admin", KnowledgeLevel::Manage);
    let theirs = store.write(&support, "faq.md", "support's").await.unwrap();
    assert_eq!(
        store.delete(&sales_admin, theirs.document.id).await,
        Err(Refusal::NotFound)
    );
    let ours = store.write(&sales_admin, "faq.md", "sales'").await.unwrap();
    assert!(
        ours.created,
        "the same name in another agent is another document"
    );
    assert_ne!(ours.document.id, theirs.document.id);
    let kept = store.get(&support, theirs.document.id).await.unwrap();
    assert_eq!(
        kept.map(|document| document.content),
        Some("support's".into())
    );
}

pub async fn knowledge_lists_a_page_at_a_time_after_its_cursor(stores: Stores) {
    let store = stores
        .knowledge
        .as_ref()
        .expect("run on a backend with a knowledge store");
    let notes = scope("support", "notes", KnowledgeLevel::Write);
    // Names compare as bytes in every store: `B` before `a`, whatever the collation.
    for name in ["a.md", "B.md", "c.md"] {
        store.write(&notes, name, "x").await.unwrap();
    }
    let names = |listing: &plugin_sdk::knowledge::Listing| -> Vec<String> {
        listing
            .documents
            .iter()
            .map(|summary| summary.filename.clone())
            .collect()
    };
    let sales = scope("sales", "notes", KnowledgeLevel::Write);
    store.write(&sales, "d.md", "x").await.unwrap();
    let first = store.list(&notes, 2, None).await.unwrap();
    assert_eq!(names(&first), ["B.md", "a.md"]);
    let cursor = first.next.expect("a full page has a next");
    // After `B.md` by bytes is `a.md`: a store comparing names by a language's rules
    // would skip it.
    let after_b = ListCursor::after("B.md");
    let bytewise = store.list(&notes, 10, Some(&after_b)).await.unwrap();
    assert_eq!(names(&bytewise), ["a.md", "c.md"]);
    // A document before the cursor deleted between pages moves nothing after it.
    let deleted = first.documents[0].id;
    store.delete(&notes, deleted).await.unwrap();
    let second = store.list(&notes, 2, Some(&cursor)).await.unwrap();
    assert_eq!(names(&second), ["c.md"]);
    assert_eq!(second.next, None, "a short page is the last");
    // A page that ends on the last document says so: no empty page after it.
    let exact = store.list(&notes, 2, None).await.unwrap();
    assert_eq!(names(&exact), ["a.md", "c.md"]);
    assert_eq!(exact.next, None);
    // A page of none is a page of one: an empty page would read as the end.
    let least = store.list(&notes, 0, None).await.unwrap();
    assert_eq!(names(&least), ["a.md"]);
    assert!(least.next.is_some());
    // Another agent's cursor reaches only its own documents.
    let theirs = store.list(&sales, 10, Some(&cursor)).await.unwrap();
    assert_eq!(names(&theirs), ["d.md"]);
}

pub async fn knowledge_an_operator_wrote_is_changed_by_a_plugin_only_at_manage(stores: Stores) {
    let store = stores
        .knowledge
        .as_ref()
        .expect("run on a backend with a knowledge store");
    let operator = Scope::operator("support", "ada");
    let uploaded = store.write(&operator, "policy.md", "v1").await.unwrap();
    assert_eq!(
        (
            uploaded.document.origin,
            uploaded.document.origin_ref.as_str()
        ),
        (Origin::Operator, "ada")
    );
    // A plugin whose namespace is the operator's name is still another writer.
    let namesake = scope("support", "ada", KnowledgeLevel::Write);
    assert_eq!(
        store.write(&namesake, "policy.md", "taken over").await,
        Err(Refusal::NotOwned)
    );
    assert_eq!(
        store.delete(&namesake, uploaded.document.id).await,
        Err(Refusal::NotOwned)
    );
    let listed = store.list(&namesake, 10, None).await.unwrap();
    assert_eq!(
        (
            listed.documents[0].origin,
            listed.documents[0].origin_ref.as_str()
        ),
        (Origin::Operator, "ada")
    );
    let manager = scope("support", "notes", KnowledgeLevel::Manage);
    let managed = store.write(&manager, "policy.md", "v2").await.unwrap();
    let kept = store
        .get(&manager, managed.document.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (kept.origin, kept.origin_ref.as_str(), kept.content.as_str()),
        (Origin::Operator, "ada", "v2"),
        "a plugin managing it leaves the operator its writer"
    );
    // An operator's upload over a plugin's document makes it theirs: a plugin that named
    // a document first keeps no hold on what the operator puts there.
    let squatted = store
        .write(&namesake, "faq.md", "the plugin's")
        .await
        .unwrap();
    let taken = store
        .write(&operator, "faq.md", "the operator's")
        .await
        .unwrap();
    assert_eq!(taken.document.id, squatted.document.id);
    let kept = store
        .get(&namesake, taken.document.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (kept.origin, kept.origin_ref.as_str()),
        (Origin::Operator, "ada")
    );
    assert_eq!(
        store.write(&namesake, "faq.md", "taken back").await,
        Err(Refusal::NotOwned)
    );
    // At manage, a plugin deletes an operator's document.
    assert!(store.delete(&manager, taken.document.id).await.is_ok());
}

pub async fn knowledge_wiped_for_one_agent_leaves_every_other(stores: Stores) {
    let store = stores
        .knowledge
        .as_ref()
        .expect("run on a backend with a knowledge store");
    let support = scope("support", "notes", KnowledgeLevel::Write);
    let sales = scope("sales", "notes", KnowledgeLevel::Write);
    for name in ["a.md", "b.md"] {
        store.write(&support, name, "refunds").await.unwrap();
    }
    let kept = store.write(&sales, "a.md", "refunds").await.unwrap();
    assert_eq!(store.wipe("support").await, Ok(2));
    assert!(store
        .list(&support, 10, None)
        .await
        .unwrap()
        .documents
        .is_empty());
    assert!(store
        .search(&support, "refunds", 10)
        .await
        .unwrap()
        .is_empty());
    assert_eq!(store.wipe("support").await, Ok(0));
    let theirs = store.search(&sales, "refunds", 10).await.unwrap();
    assert_eq!(theirs.len(), 1);
    assert_eq!(theirs[0].id, kept.document.id);
    // The count is the agent's again: three more fit.
    for name in ["x.md", "y.md", "z.md"] {
        store.write(&support, name, "x").await.unwrap();
    }
}
