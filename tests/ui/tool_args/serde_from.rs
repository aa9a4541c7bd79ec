use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

#[derive(Deserialize, JsonSchema, ToolArgs)]
#[serde(from = "Raw")]
struct Args {
    city: String,
}

#[derive(Deserialize, JsonSchema)]
struct Raw {
    town: String,
}

impl From<Raw> for Args {
    fn from(raw: Raw) -> Self {
        Self { city: raw.town }
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
