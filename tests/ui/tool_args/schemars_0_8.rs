use plugin_sdk::prelude::*;
// The plugin's Cargo.toml says `schemars = "0.8"`.
use schemars08::JsonSchema;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

#[derive(Deserialize, JsonSchema, ToolArgs)]
#[schemars(crate = "schemars08")] // only because this test also links schemars 1.x
struct Lookup {
    order: String,
}

/// Looks an order up.
#[define_tool]
async fn lookup(args: Lookup) -> bool {
    args.order.is_empty()
}

fn main() {}
