use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

#[derive(Default, Deserialize, JsonSchema, ToolArgs)]
#[serde(default)]
struct Args {
    days: u8,
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
