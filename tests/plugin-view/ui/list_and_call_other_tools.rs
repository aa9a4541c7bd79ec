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

/// The same through the macros' support module: its descriptors can be named, but no
/// call input can be made for them, so no tool can be called.
#[define_tool]
async fn call_through_private(ctx: &ToolContext) -> usize {
    let mut answered = 0;
    for tool in plugin_sdk::__private::inventory::iter::<plugin_sdk::__private::ToolDescriptor> {
        let input = plugin_sdk::__private::CallInput::new("{}", ctx);
        answered += usize::from(tool.call(input).await.is_ok());
    }
    answered
}

fn main() {}
