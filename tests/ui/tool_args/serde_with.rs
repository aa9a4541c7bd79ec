use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

#[derive(Deserialize, JsonSchema, ToolArgs)]
struct Args {
    #[serde(with = "upper")]
    city: String,
}

mod upper {
    use serde::Deserialize;
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
        String::deserialize(d).map(|s| s.to_uppercase())
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
