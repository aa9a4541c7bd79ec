use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

/// Checks each message.
#[define_hook(event = "message_received", fail_closed = { "en-US": "Sorry.", "it-IT": " " })]
fn check(event: &MessageReceived) -> Result<(), String> {
    let _ = event;
    Err("down".into())
}

fn main() {}
