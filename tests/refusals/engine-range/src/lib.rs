//! A plugin built for an engine this one is not.

use plugin_sdk::prelude::*;

plugin_sdk::plugin! {
    namespace = "next-gen",
    engine = ">=2, <3",
}

#[derive(Deserialize, JsonSchema, ToolArgs)]
pub struct Ping {
    pub text: String,
}

/// Echo the text back.
#[define_tool]
pub async fn echo(ping: Ping) -> String {
    ping.text
}
