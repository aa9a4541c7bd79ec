plugin_sdk::plugin! { namespace = "system", engine = ">=0.1" }

fn main() {}
