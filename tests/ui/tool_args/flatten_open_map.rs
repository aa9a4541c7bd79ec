use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

#[derive(Deserialize, JsonSchema, ToolArgs)]
struct Args {
    city: String,
    #[serde(flatten)]
    rest: std::collections::HashMap<String, String>,
}
#[derive(Serialize, JsonSchema)]
struct Out {
    ok: bool,
}

/// Looks something up.
#[define_tool]
async fn lookup(args: Args) -> Out {
    let _ = args;
    Out { ok: true }
}
fn main() {}
