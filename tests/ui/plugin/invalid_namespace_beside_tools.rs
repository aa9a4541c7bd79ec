use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "Acme_CRM", engine = ">=0.1" }

/// Counts contacts.
#[define_tool]
async fn count() -> u32 {
    1
}

/// Counts companies.
#[define_tool]
async fn companies() -> u32 {
    2
}

/// Logs each message.
#[define_hook(event = "message_received")]
fn log(event: &MessageReceived) {
    let _ = event;
}

fn main() {}
