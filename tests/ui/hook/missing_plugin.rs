use plugin_sdk::prelude::*;

/// Observes.
#[define_hook(event = "message_received")]
fn observe(event: &MessageReceived) {
    let _ = event;
}

fn main() {}
