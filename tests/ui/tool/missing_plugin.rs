use plugin_sdk::prelude::*;

#[derive(Deserialize, JsonSchema, ToolArgs)]
struct Args {
    city: String,
}

#[derive(Serialize, JsonSchema)]
struct Out {
    ok: bool,
}

/// Look something up.
#[define_tool]
async fn lookup(args: Args) -> Out {
    let _ = args;
    Out { ok: true }
}

fn main() {}
