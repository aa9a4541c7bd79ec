use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

#[define_hook(event = "message_received")]
fn silent(event: &MessageReceived) {
    let _ = event;
}

fn main() {}
