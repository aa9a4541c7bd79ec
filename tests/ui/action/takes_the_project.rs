use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1", api_version = 0 }

#[derive(Deserialize, JsonSchema, ToolArgs)]
#[tool_args(action)]
struct Args {
    /// What the customer asked for.
    note: Note<200>,
}

/// Publish the page the reply promised.
#[define_action]
async fn publish_page(args: Args, project: &plugin_sdk::project::Project) -> Result<(), ToolError> {
    let _ = (args, project);
    Ok(())
}

fn main() {}
