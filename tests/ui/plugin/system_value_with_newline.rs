// A default goes into a Dockerfile `ENV` line: a control character cannot.
plugin_sdk::plugin! {
    namespace = "demo",
    engine = ">=0.1",
    system = { env = { GREETING = "hello\nworld" } },
}

fn main() {}
