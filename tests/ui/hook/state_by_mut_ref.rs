use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

/// Counts the messages, in the conversation's state.
#[define_hook(event = "message_received")]
fn count(state: &mut State) {
    let _ = state;
}

fn main() {}
