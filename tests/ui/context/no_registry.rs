use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

/// Lists the other tools.
#[define_tool]
async fn list(engine: &engine_core::Engine) -> usize {
    engine.tools().len()
}

fn main() {}
