use plugin_sdk::prelude::*;
use plugin_sdk::knowledge::Read;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

/// Writes a note.
#[define_tool]
async fn note(kb: Knowledge<Read>) -> bool {
    kb.write("note.md", "text").await.is_ok()
}

fn main() {}
