use plugin_sdk::prelude::*;
use plugin_sdk::knowledge::Manage;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

/// Opens the engine database.
#[define_tool]
async fn raw(ctx: &ToolContext, kb: Knowledge<Manage>) -> bool {
    ctx.database().is_some() || kb.connection().is_some()
}

fn main() {}
