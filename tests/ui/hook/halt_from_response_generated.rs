use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

/// Halts after the model.
#[define_hook(event = "response_generated", mutates_response)]
fn halt(event: &ResponseGenerated) -> PreModelOutcome {
    let _ = event;
    PreModelOutcome::Halt { message: "too late".into(), persist: true }
}

fn main() {}
