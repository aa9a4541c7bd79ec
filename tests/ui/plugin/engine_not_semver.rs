plugin_sdk::plugin! { namespace = "demo", engine = "version one or later" }

fn main() {}
