plugin_sdk::plugin! {
    namespace = "demo",
    engine = ">=0.1",
    long_description_file = "",
}

fn main() {}
