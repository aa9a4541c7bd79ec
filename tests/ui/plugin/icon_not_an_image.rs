plugin_sdk::plugin! {
    namespace = "demo",
    engine = ">=0.1",
    icon = "catalogue/icon.gif",
}

fn main() {}
