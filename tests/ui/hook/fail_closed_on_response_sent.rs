use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

/// Checks what was sent.
#[define_hook(event = "response_sent", fail_closed = "Sorry.")]
fn check(event: &ResponseSent) -> Result<(), String> {
    let _ = event;
    Err("down".into())
}

fn main() {}
