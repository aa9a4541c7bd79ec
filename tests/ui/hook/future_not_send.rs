use plugin_sdk::prelude::*;
use std::rc::Rc;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

async fn fetch() -> u32 {
    1
}

/// Logs each message, holding an `Rc` across an `.await`.
#[define_hook(event = "message_received")]
async fn log(event: &MessageReceived) {
    let shared = Rc::new(1);
    let fetched = fetch().await;
    let _ = (event, *shared + fetched);
}

fn main() {}
