use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

/// Injects context.
#[define_hook(event = "message_received", mutates_response)]
fn inject(event: &MessageReceived) -> PreModelOutcome {
    PreModelOutcome::InjectContext(event.message().into())
}

fn main() {}
