// Codes and tokens cross the authorization and token endpoints: only TLS keeps them.
plugin_sdk::plugin! {
    namespace = "demo",
    engine = ">=0.1",
    oauth = {
        google = {
            authorize_url = "http://accounts.example.com/authorize",
            token_url = "https://accounts.example.com/token",
            scopes = ["calendar.read"],
        },
    },
}

fn main() {}
