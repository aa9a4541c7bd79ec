use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

struct StoreDown;

/// Fails.
#[define_hook(event = "message_received")]
fn fails(event: &MessageReceived) -> Result<PreModelOutcome, StoreDown> {
    let _ = event;
    Err(StoreDown)
}

fn main() {}
