use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

/// Asks a provider directly.
#[define_tool]
async fn ask(ctx: &ToolContext) -> bool {
    ctx.provider().is_some()
}

fn main() {}
