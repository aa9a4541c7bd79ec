use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1", api_version = 0 }

#[derive(Deserialize, JsonSchema, ToolArgs)]
#[tool_args(action)]
struct Args {
    /// What the customer asked for.
    note: Note<200>,
}

/// Log the contact in the CRM.
#[define_action]
async fn log_contact(args: Args, history: History) -> Result<(), ToolError> {
    let _ = (args, history);
    Ok(())
}

fn main() {}
