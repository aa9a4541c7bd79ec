use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

/// Looks something up.
#[define_tool]
async fn lookup(abort: Abort) -> bool {
    let _ = abort;
    true
}
fn main() {}
