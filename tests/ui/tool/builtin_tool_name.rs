use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

/// Lists the files of the CRM.
#[define_tool]
async fn list_files() -> Vec<String> {
    Vec::new()
}

fn main() {}
