// Variables under `ENGINE_` are the engine's (its configuration, secrets, MCP token): a
// plugin's default there would change how every engine carrying it starts.
plugin_sdk::plugin! {
    namespace = "demo",
    engine = ">=0.1",
    system = { env = { ENGINE_CONFIG = "/etc/engine.toml" } },
}

fn main() {}
