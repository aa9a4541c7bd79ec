// The engine names a provider `<namespace>:<id>` in its configuration: lowercase only.
plugin_sdk::plugin! {
    namespace = "demo",
    engine = ">=0.1",
    oauth = {
        Google = {
            authorize_url = "https://accounts.example.com/authorize",
            token_url = "https://accounts.example.com/token",
            scopes = ["calendar.read"],
        },
    },
}

fn main() {}
