plugin_sdk::plugin! { namespace = "demo" }

fn main() {}
