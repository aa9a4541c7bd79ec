use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

use plugin_sdk::knowledge::Read;
/// Searches.
#[define_tool]
async fn search(kb: &Knowledge<Read>) -> bool {
    let _ = kb;
    true
}
fn main() {}
