use std::borrow::Cow;
use std::collections::BTreeMap;

use plugin_sdk::prelude::*;
use plugin_sdk::StrictSchema;
use schemars::{json_schema, Schema, SchemaGenerator};

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

/// Free-form labels, vouched strict by hand.
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

fn main() {}
