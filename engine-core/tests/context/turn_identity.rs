//! The turn's identity: the subscriber and the conversation come from the turn, never
//! from the model.

use engine_core::CallErrorKind;
use serde_json::json;

use crate::support::{call, call_bare, engine, in_conversation, kind, tool};

#[tokio::test]
async fn the_subscriber_and_conversation_come_from_the_turn_not_the_model() {
    let engine = engine("[agents.a]\n");
    let turn = in_conversation(&engine, "a", "subscriber-7", "conversation-3");
    // The model sends nothing that could name them: the schema has no properties.
    let schema = tool(&engine, "ctx:whoami").input_schema();
    assert_eq!(schema["properties"], json!({}));
    let who = call(&engine, &turn, "ctx__whoami", json!({}))
        .await
        .unwrap();
    assert_eq!(
        who,
        json!({ "subscriber": "subscriber-7", "conversation": "conversation-3" })
    );
    let forged = call(
        &engine,
        &turn,
        "ctx__whoami",
        json!({ "subscriber": "someone-else" }),
    )
    .await;
    assert_eq!(kind(forged), CallErrorKind::InvalidArguments);
    // The engine no longer offers a tool that reads the turn's identity in a turn
    // without a conversation: it is unknown there. Its extractor, given a context
    // without a conversation, still says why.
    let session = engine.turn("a").unwrap();
    let outside = call(&engine, &session, "ctx__whoami", json!({})).await;
    assert_eq!(kind(outside), CallErrorKind::UnknownTool);
    let outside = call_bare("ctx:whoami", json!({}))
        .await
        .expect_err("no turn");
    assert!(
        outside.message().contains("outside a conversation"),
        "{}",
        outside.message()
    );
}
