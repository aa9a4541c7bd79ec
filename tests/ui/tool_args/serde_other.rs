use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

#[derive(Deserialize, JsonSchema, ToolArgs)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Action {
    Close { reason: String },
    #[serde(other)]
    Unknown,
}

fn main() {}
