use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

#[derive(Deserialize, JsonSchema, ToolArgs)]
struct Args {
    #[serde(alias = "cty")]
    city: String,
}

fn main() {}
