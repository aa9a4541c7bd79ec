use plugin_sdk::prelude::*;
use plugin_sdk::knowledge::Manage;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

/// Wipes the knowledge base.
#[define_tool]
async fn wipe(kb: Knowledge<Manage>) -> bool {
    kb.clear().await.is_ok()
}

fn main() {}
