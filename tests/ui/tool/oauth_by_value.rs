use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

/// Reads the user's calendar.
#[define_tool]
async fn events(oauth: OAuth) -> bool {
    let _ = oauth;
    true
}
fn main() {}
