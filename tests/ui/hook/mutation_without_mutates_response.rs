use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

/// Replaces every reply.
#[define_hook(event = "response_generated")]
fn replace(event: &ResponseGenerated) -> ResponseOutcome {
    let _ = event;
    ResponseOutcome::ReplaceResponse { message: "replaced".into() }
}

fn main() {}
