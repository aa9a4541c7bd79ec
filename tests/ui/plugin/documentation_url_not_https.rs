plugin_sdk::plugin! {
    namespace = "demo",
    engine = ">=0.1",
    documentation_url = "http://docs.example.com/plugin",
}

fn main() {}
