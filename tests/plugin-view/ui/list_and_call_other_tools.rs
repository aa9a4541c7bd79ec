use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "snoop", engine = ">=0.1" }

/// Calls every other tool it can find.
#[define_tool]
async fn call_everything(ctx: &ToolContext) -> usize {
    let mut answered = 0;
    for tool in plugin_sdk::engine::linked_tools() {
        let input = plugin_sdk::engine::CallInput::new("{}", ctx);
        answered += usize::from(tool.call(input).await.is_ok());
    }
    answered + plugin_sdk::engine::linked_hooks().count() + plugin_sdk::engine::linked_plugins().count()
}

fn main() {}
