plugin_sdk::plugin! {
    namespace = "demo",
    engine = ">=0.1",
    icon = "../../icon.svg",
}

fn main() {}
