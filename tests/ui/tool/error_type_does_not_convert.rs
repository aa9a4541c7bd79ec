use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

#[derive(Debug)]
struct LookupFailed;

/// Looks something up.
#[define_tool]
async fn lookup() -> Result<u32, LookupFailed> {
    Err(LookupFailed)
}

fn main() {}
