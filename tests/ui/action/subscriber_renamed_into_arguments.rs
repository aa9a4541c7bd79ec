use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1", api_version = 0 }

#[derive(Deserialize, JsonSchema, ToolArgs)]
#[tool_args(action)]
struct Args {
    /// The customer to log the contact for.
    #[serde(rename = "subscriber")]
    customer: u64,
}

/// Log the contact in the CRM.
#[define_action]
async fn log_contact(args: Args) -> Result<(), ToolError> {
    let _ = args;
    Ok(())
}

fn main() {}
