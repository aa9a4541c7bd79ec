plugin_sdk::plugin! { namespace = "a-namespace-that-is-far-too-long-for-anyone", engine = ">=0.1" }

fn main() {}
