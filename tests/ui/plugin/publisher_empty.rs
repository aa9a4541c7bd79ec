plugin_sdk::plugin! {
    namespace = "demo",
    engine = ">=0.1",
    publisher = "",
}

fn main() {}
