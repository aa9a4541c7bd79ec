plugin_sdk::plugin! {
    namespace = "demo",
    engine = ">=0.1",
    display_name = { "it-it": "Dimostrazione" },
}

fn main() {}
