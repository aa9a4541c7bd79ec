plugin_sdk::plugin! {
    namespace = "demo",
    engine = ">=0.1",
    oauth = {
        google = {
            authorize_url = "https://accounts.example.com/authorize",
            scopes = ["calendar.read"],
        },
    },
}

fn main() {}
