use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

/// Observes.
#[define_hook(event = "message_received", read_only)]
fn observe(event: &MessageReceived) {
    let _ = event;
}

fn main() {}
