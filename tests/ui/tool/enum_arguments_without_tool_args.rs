use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

#[derive(Deserialize, JsonSchema)]
enum Mode {
    Fast,
    Thorough,
}
#[derive(Serialize, JsonSchema)]
struct Out {
    ok: bool,
}

/// Looks something up.
#[define_tool]
async fn lookup(mode: Mode) -> Out {
    let _ = mode;
    Out { ok: true }
}
fn main() {}
