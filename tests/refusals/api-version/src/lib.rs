//! A plugin with an action and a channel, written against an action and channel API this
//! engine does not support (version 7).

use plugin_sdk::channel::{Channel, ChannelRequest, ChannelResponse, FinishedTurn, Inbound};
use plugin_sdk::prelude::*;

plugin_sdk::plugin! {
    namespace = "future-crm",
    engine = ">=0.1",
    api_version = 7,
}

#[derive(Deserialize, JsonSchema, ToolArgs)]
#[tool_args(action)]
pub struct Call {
    /// In how many days.
    pub in_days: u8,
}

/// Schedule a call-back.
#[define_action]
pub async fn schedule_call(call: Call) -> Result<(), ToolError> {
    let _ = call.in_days;
    Ok(())
}

/// Messages from the future.
#[plugin_sdk::define_channel(name = "future")]
pub struct Future;

impl Channel for Future {
    fn inbound(&self, _: &ChannelRequest) -> Result<Inbound, ChannelResponse> {
        Err(ChannelResponse::text(400, "no"))
    }

    fn respond(&self, finished: &FinishedTurn) -> ChannelResponse {
        ChannelResponse::text(200, finished.reply.clone())
    }
}
