use plugin_sdk::prelude::*;
use std::rc::Rc;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

async fn fetch() -> u32 {
    1
}

/// Counts something, holding an `Rc` across an `.await`.
#[define_tool]
async fn count() -> u32 {
    let shared = Rc::new(1);
    let fetched = fetch().await;
    *shared + fetched
}

fn main() {}
