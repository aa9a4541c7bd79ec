use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

/// Asks the model.
#[define_tool]
async fn ask(model: Model) -> bool {
    let _ = model;
    true
}

fn main() {}
