use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

/// Reads what the model was told.
#[define_tool]
async fn peek(ctx: &ToolContext) -> usize {
    ctx.system_prompt().len()
}

fn main() {}
