use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

mod audit {
    use plugin_sdk::prelude::*;

    /// Logs each message.
    #[define_hook(event = "message_received")]
    fn log(event: &MessageReceived) {
        let _ = event;
    }
}

/// Logs each reply.
#[define_hook(event = "response_sent", name = "log")]
fn log_reply(event: &ResponseSent) {
    let _ = event;
}

fn main() {}
