use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

type Labels = std::collections::HashMap<String, String>;

#[derive(Deserialize, JsonSchema, ToolArgs)]
struct Args {
    labels: Labels,
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
