use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

/// Counts.
#[define_tool]
async fn count(state: &mut State) -> bool {
    let _ = state;
    true
}
fn main() {}
