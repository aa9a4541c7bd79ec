use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

#[derive(Deserialize, JsonSchema, ToolArgs)]
#[serde(try_from = "String")]
struct Args {
    city: String,
}

impl TryFrom<String> for Args {
    type Error = String;
    fn try_from(city: String) -> Result<Self, String> {
        Ok(Self { city })
    }
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
