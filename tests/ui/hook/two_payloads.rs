use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

/// Observes.
#[define_hook(event = "message_received")]
fn observe(event: &MessageReceived, again: &MessageReceived) {
    let _ = (event, again);
}
fn main() {}
