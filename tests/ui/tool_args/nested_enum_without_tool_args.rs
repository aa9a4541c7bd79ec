use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

#[derive(Deserialize, JsonSchema)]
enum Priority {
    Low,
    High,
}
#[derive(Deserialize, JsonSchema, ToolArgs)]
struct Args {
    title: String,
    priority: Priority,
}
#[derive(Serialize, JsonSchema)]
struct Out {
    ok: bool,
}

/// Files a task.
#[define_tool]
async fn file(args: Args) -> Out {
    let _ = args;
    Out { ok: true }
}
fn main() {}
