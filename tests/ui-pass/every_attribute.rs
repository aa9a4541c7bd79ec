//! Every attribute together, tools in a submodule, a tool without arguments, a plain
//! return type, and a non-strict tool that says so.
// A compile check: the arguments' fields shape the schemas, and nothing reads them.
#![allow(dead_code)]
plugin_sdk::plugin! {
    namespace = "everything",
    engine = ">=0.1, <2",
    display_name = { "en-US": "Everything", "zh-Hant-TW": "一切" },
    description = "Shows every attribute.",
    long_description_file = "ui-pass/catalogue/about.md",
    icon = "ui-pass/catalogue/icon.svg",
    category = "Examples",
    publisher = "The SDK's tests",
    documentation_url = "https://example.com/every-attribute",
}

mod tools {
    use plugin_sdk::prelude::*;

    #[derive(Deserialize, JsonSchema, ToolArgs)]
    pub struct Args {
        pub city: String,
    }

    #[derive(Serialize, JsonSchema)]
    pub struct Out {
        pub ok: bool,
    }

    /// Every attribute at once.
    #[define_tool(
        name = "all_attributes",
        summary = { "en-US": "All attributes.", "it-IT": "Tutti gli attributi." },
        category = "demo-2",
        read_only,
        destructive = false,
        idempotent = true,
        open_world = false,
        example = r#"{ "city": "Rome" }"#,
    )]
    pub async fn attributes(args: Args, ctx: &ToolContext) -> Result<Out, ToolError> {
        let _ = (args, ctx);
        Ok(Out { ok: true })
    }

    /// No arguments and a plain return type.
    #[define_tool(summary = "Pings.", example = "{}")]
    pub async fn ping() -> Out {
        Out { ok: true }
    }

    #[derive(Deserialize, JsonSchema, ToolArgs)]
    #[tool_args(strict = false)]
    pub struct Loose {
        pub labels: std::collections::HashMap<String, String>,
    }

    /// Takes an open map, so it is not strict, and says so.
    #[define_tool(strict = false)]
    pub async fn loose(args: Loose) -> usize {
        args.labels.len()
    }
}

fn main() {
    let _ = tools::ping;
}

/// A test target of its own (tests/Cargo.toml): that it compiled is the check, and `main`
/// asserts what it links.
#[test]
fn compiles_and_runs() {
    main();
}
