use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

/// Keeps each message as an artifact.
#[define_hook(event = "message_received")]
fn keep(event: &MessageReceived, artifacts: &Artifacts) {
    let _ = (event, artifacts);
}

fn main() {}
