use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

/// A struct, not a hook.
#[define_hook(event = "message_received")]
struct Observe;

fn main() {}
