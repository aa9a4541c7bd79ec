use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

/// Reads what the model was offered.
#[define_tool]
async fn peek(ctx: &ToolContext) -> usize {
    ctx.catalog().len()
}

fn main() {}
