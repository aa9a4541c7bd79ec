use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

/// Counts the replies sent, in the conversation's state.
#[define_hook(event = "response_sent")]
fn count_sent(state: &State) {
    let sent: u32 = state.get("sent").unwrap_or(0);
    state.set("sent", &(sent + 1)).unwrap();
}

fn main() {}
