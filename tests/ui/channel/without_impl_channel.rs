plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1", api_version = 0 }

/// Messages from another service.
#[plugin_sdk::define_channel(name = "inbox")]
struct Inbox;

fn main() {}
