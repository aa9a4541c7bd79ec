//! The OpenAI catalog of the example engine, judged by the OpenAI Agents SDK.
//!
//! This binary links only the example plugins (not this crate's fixtures), as the
//! example engine does.

#[path = "sdk/support/oracle.rs"]
mod oracle;

use acme_crm as _;
use engine_core::{Engine, Format};
use serde_json::Value;
use weather as _;

#[test]
fn every_openai_rendering_passes_the_oracle_unchanged() {
    let engine = Engine::builder()
        .build()
        .expect("the example plugins are valid");
    let catalog: Value = serde_json::from_slice(&engine.catalog(Format::OpenAi, "en-US")).unwrap();
    let schemas: Vec<(String, Value)> = catalog
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| {
            let function = &tool["function"];
            (
                function["name"].as_str().unwrap().to_owned(),
                function["parameters"].clone(),
            )
        })
        .collect();
    assert_eq!(schemas.len(), engine.tools().len());
    for verdict in oracle::oracle(&schemas) {
        for mode in ["strict", "lenient"] {
            assert_eq!(verdict[mode]["accepted"], true, "{verdict}");
            assert_eq!(
                verdict[mode]["unchanged"], true,
                "rewritten by the oracle: {verdict}"
            );
        }
    }
}
