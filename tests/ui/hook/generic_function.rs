use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

/// Observes.
#[define_hook(event = "message_received")]
fn observe<T: Default>(event: &MessageReceived) {
    let _ = (event, T::default());
}

fn main() {}
