plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1", homepage = "https://example.com" }

fn main() {}
