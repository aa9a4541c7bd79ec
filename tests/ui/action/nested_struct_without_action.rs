use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1", api_version = 0 }

#[derive(Deserialize, JsonSchema, ToolArgs)]
struct Window {
    /// First day, 0 to 6.
    from: u8,
}

#[derive(Deserialize, JsonSchema, ToolArgs)]
#[tool_args(action)]
struct Args {
    /// When to call.
    window: Window,
}

/// Log the contact in the CRM.
#[define_action]
async fn log_contact(args: Args) -> Result<(), ToolError> {
    let _ = args;
    Ok(())
}

fn main() {}
