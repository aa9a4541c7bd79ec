use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

/// Checks each reply.
#[define_hook(event = "response_generated", fail_closed = "The reply could not be checked.")]
fn check(event: &ResponseGenerated) -> Result<(), String> {
    let _ = event;
    Err("down".into())
}

fn main() {}
