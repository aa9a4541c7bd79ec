plugin_sdk::plugin! {
    namespace = "demo",
    engine = ">=0.1",
    oauth = {
        google = {
            authorize_url = "https://accounts.example.com/authorize",
            token_url = "https://accounts.example.com/token",
            scopes = ["calendar.read"],
        },
        google = {
            authorize_url = "https://accounts.example.com/authorize",
            token_url = "https://accounts.example.com/token",
            scopes = ["mail.read"],
        },
    },
}

fn main() {}
