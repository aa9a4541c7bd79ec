use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

/// Tries to change what was already sent.
#[define_hook(event = "response_sent")]
async fn after(event: &ResponseSent) -> ResponseOutcome {
    let _ = event;
    ResponseOutcome::ReplaceResponse { message: "too late".into() }
}

fn main() {}
