use plugin_sdk::prelude::*;
use plugin_sdk::knowledge::Manage;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

/// Opens the knowledge base's database.
#[define_tool]
async fn raw(kb: Knowledge<Manage>) -> bool {
    kb.connection().is_some()
}

fn main() {}
