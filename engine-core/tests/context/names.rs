//! Names with `-`: rendered in every catalog and called back by their wire name.

use engine_core::Format;
use serde_json::{json, Value};

use crate::support::{call, engine};

#[tokio::test]
async fn a_name_with_a_dash_is_in_every_catalog_and_called_back_by_its_wire_name() {
    let engine = engine("[agents.a]\n");
    for format in Format::ALL {
        let catalog = String::from_utf8(engine.catalog(format, "en-US").to_vec()).unwrap();
        assert!(
            catalog.contains("\"ctx__say-hello\""),
            "{format}: {catalog}"
        );
    }
    let tool = engine
        .tool("ctx__say-hello")
        .expect("found by its wire name");
    assert_eq!(tool.id(), "ctx:say-hello");
    assert!(engine.tool("ctx:say-hello").is_some(), "and by its id");
    let session = engine.turn("a").unwrap();
    let answer: Value = call(&engine, &session, "ctx__say-hello", json!({}))
        .await
        .unwrap();
    assert_eq!(answer, "hello");
}
