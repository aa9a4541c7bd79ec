use plugin_sdk::prelude::*;
use plugin_sdk::knowledge::Write;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

/// Writes.
#[define_tool]
async fn note(kb: &mut Knowledge<Write>) -> bool {
    let _ = kb;
    true
}

fn main() {}
