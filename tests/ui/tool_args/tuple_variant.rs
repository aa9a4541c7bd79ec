use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

#[derive(Deserialize, JsonSchema, ToolArgs)]
struct Args {
    shape: Shape,
}

#[derive(Deserialize, JsonSchema, ToolArgs)]
enum Shape {
    Circle { radius: f64 },
    Segment(f64, f64),
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
