// A tool shares its plugin's state as `Shared<T>`, T implementing `PluginState` (a plain
// client hidden in a static is what this replaces): any other T is refused, naming it.
use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

pub struct HttpClient;

/// Pings the CRM.
#[define_tool]
async fn ping(client: Shared<HttpClient>) -> bool {
    let _ = &*client;
    true
}

fn main() {}
