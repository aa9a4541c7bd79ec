use plugin_sdk::prelude::*;
use plugin_sdk::knowledge::{Read, Write};

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

/// Copies between two levels of one knowledge base.
#[define_tool]
async fn copy(reader: Knowledge<Read>, writer: Knowledge<Write>) -> bool {
    let _ = (reader, writer);
    true
}

fn main() {}
