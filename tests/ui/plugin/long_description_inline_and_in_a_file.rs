plugin_sdk::plugin! {
    namespace = "demo",
    engine = ">=0.1",
    long_description = "Orders and returns.",
    long_description_file = "catalogue/about.md",
}

fn main() {}
