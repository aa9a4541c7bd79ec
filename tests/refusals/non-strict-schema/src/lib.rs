//! A type whose author vouched for strictness by hand, with a schema that is not strict.
//!
//! `StrictSchema` can be implemented by hand for a type with a hand-written `JsonSchema`;
//! the compile-time check then trusts the author, and the start-up re-check does not.

use std::borrow::Cow;
use std::collections::BTreeMap;

use plugin_sdk::prelude::*;
use plugin_sdk::StrictSchema;
use schemars::{json_schema, Schema, SchemaGenerator};

plugin_sdk::plugin! {
    namespace = "labels",
    engine = ">=0.1",
}

/// Free-form labels: an open map, which strict mode cannot express.
#[derive(Deserialize)]
pub struct Labels(pub BTreeMap<String, String>);

impl JsonSchema for Labels {
    fn schema_name() -> Cow<'static, str> {
        "Labels".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "object", "additionalProperties": { "type": "string" } })
    }
}

impl StrictSchema for Labels {}

#[derive(Deserialize, JsonSchema, ToolArgs)]
pub struct Tagging {
    pub item: String,
    pub labels: Labels,
}

/// Attach labels to an item.
#[define_tool]
pub async fn tag(tagging: Tagging) -> usize {
    tagging.item.len() + tagging.labels.0.len()
}
