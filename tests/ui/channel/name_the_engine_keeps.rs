use plugin_sdk::channel::{Channel, ChannelRequest, ChannelResponse, FinishedTurn, Inbound};

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1", api_version = 0 }

/// Messages from another service.
#[plugin_sdk::define_channel(name = "api")]
struct Inbox;

impl Channel for Inbox {
    fn inbound(&self, _: &ChannelRequest) -> Result<Inbound, ChannelResponse> {
        Err(ChannelResponse::text(400, "no"))
    }

    fn respond(&self, finished: &FinishedTurn) -> ChannelResponse {
        ChannelResponse::text(200, finished.reply.clone())
    }
}

fn main() {}
