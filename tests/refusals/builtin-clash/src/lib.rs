//! A tool that takes the name of the engine's built-in `list_files`.

use plugin_sdk::prelude::*;

plugin_sdk::plugin! {
    namespace = "drive",
    engine = ">=0.1",
}

#[derive(Deserialize, JsonSchema, ToolArgs)]
pub struct Folder {
    pub path: String,
}

/// List the files of a shared drive folder.
#[define_tool]
pub async fn list_files(folder: Folder) -> Vec<String> {
    vec![folder.path]
}
