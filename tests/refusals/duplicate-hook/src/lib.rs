//! Two hooks of one plugin that both take the name `screen`, at different events.

use plugin_sdk::prelude::*;

plugin_sdk::plugin! {
    namespace = "dup-hook",
    engine = ">=0.1",
}

pub mod before {
    use super::*;

    /// Screens the user's message.
    #[define_hook(event = "message_received", name = "screen")]
    pub fn screen_message(event: &MessageReceived) {
        let _ = event;
    }
}

pub mod after {
    use super::*;

    /// Screens the model's reply.
    #[define_hook(event = "response_generated", name = "screen")]
    pub fn screen_reply(event: &ResponseGenerated) {
        let _ = event;
    }
}
