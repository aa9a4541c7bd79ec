use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

#[derive(Deserialize, JsonSchema, ToolArgs)]
struct Args {
    unit: Unit,
}

#[derive(Deserialize, JsonSchema, ToolArgs)]
#[serde(rename_all = "snake_case")]
enum Unit {
    #[serde(alias = "c")]
    Celsius,
    Fahrenheit,
}

fn main() {}
