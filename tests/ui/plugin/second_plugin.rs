plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

plugin_sdk::plugin! { namespace = "again", engine = ">=0.1" }

fn main() {}
