use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

#[derive(Deserialize, JsonSchema, ToolArgs)]
struct Args {
    city: String,
}
/// Observes.
#[define_hook(event = "message_received")]
fn observe(event: &MessageReceived, args: Args) {
    let _ = (event, args);
}
fn main() {}
