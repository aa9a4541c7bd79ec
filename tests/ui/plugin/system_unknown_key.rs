// `system` takes `debian` and `env`: another package manager's key says so.
plugin_sdk::plugin! {
    namespace = "demo",
    engine = ">=0.1",
    system = { apk = ["chromium"] },
}

fn main() {}
