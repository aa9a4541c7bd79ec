plugin_sdk::plugin! {
    namespace = "demo",
    engine = ">=0.1",
    long_description_file = "catalogue/about.html",
}

fn main() {}
