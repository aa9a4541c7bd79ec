//! Two channels named `inbox` in two plugins: this crate's, with `#[define_channel]`, and
//! another plugin's, registered by hand as another crate's would be (in one crate,
//! `#[define_channel]` refuses the second at compile time:
//! `tests/ui/channel/two_channels_with_one_name.rs`). The other plugin also declares no
//! `api_version`: both problems are reported at once.

use plugin_sdk::channel::{Channel, ChannelRequest, ChannelResponse, FinishedTurn, Inbound};

plugin_sdk::plugin! {
    namespace = "inboxes",
    engine = ">=0.1",
    api_version = 0,
}

/// Messages from one service.
#[plugin_sdk::define_channel(name = "inbox")]
pub struct First;

/// Messages from another service, under the same name, in another plugin.
pub struct Second;

test_support::hand_made_plugin!(OTHER, "other-inboxes", package = "other-inboxes");
test_support::hand_made_channel!(OTHER, "inbox", Second);

macro_rules! refusing_channel {
    ($ty:ty) => {
        impl Channel for $ty {
            fn inbound(&self, _: &ChannelRequest) -> Result<Inbound, ChannelResponse> {
                Err(ChannelResponse::text(400, "no"))
            }

            fn respond(&self, finished: &FinishedTurn) -> ChannelResponse {
                ChannelResponse::text(200, finished.reply.clone())
            }
        }
    };
}

refusing_channel!(First);
refusing_channel!(Second);
