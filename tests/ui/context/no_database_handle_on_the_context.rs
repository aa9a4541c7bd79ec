use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

/// Opens the engine database.
#[define_tool]
async fn raw(ctx: &ToolContext) -> bool {
    ctx.database().is_some()
}

fn main() {}
