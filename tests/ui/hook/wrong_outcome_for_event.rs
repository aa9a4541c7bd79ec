use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

/// Halts on stop.
#[define_hook(event = "message_received")]
fn stop(event: &MessageReceived) -> ResponseOutcome {
    let _ = event;
    ResponseOutcome::ReplaceResponse { message: "stopped".into() }
}

fn main() {}
