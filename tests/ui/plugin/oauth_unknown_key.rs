// The client's id and secret are the operator's, per agent: not the plugin's.
plugin_sdk::plugin! {
    namespace = "demo",
    engine = ">=0.1",
    oauth = {
        google = {
            authorize_url = "https://accounts.example.com/authorize",
            token_url = "https://accounts.example.com/token",
            scopes = ["calendar.read"],
            client_secret = "s3cret",
        },
    },
}

fn main() {}
