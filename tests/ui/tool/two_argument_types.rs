use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

#[derive(Deserialize, JsonSchema, ToolArgs)]
struct Args {
    city: String,
}

#[derive(Deserialize, JsonSchema, ToolArgs)]
struct More {
    days: u8,
}

#[derive(Serialize, JsonSchema)]
struct Out {
    ok: bool,
}

/// Look something up.
#[define_tool]
async fn lookup(args: Args, more: More) -> Out {
    let _ = (args, more);
    Out { ok: true }
}

fn main() {}
