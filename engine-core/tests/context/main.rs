//! The tool context, rule by rule, through `Engine::call` with tools that take each
//! extractor: secrets and equipping, audit redaction, state, artifacts, knowledge on the
//! real SQLite store, model access through a provider double on a real socket, the
//! turn's identity, and OAuth tokens through a flow double.

plugin_sdk::plugin! {
    namespace = "ctx",
    engine = ">=0.1",
    oauth = {
        cal = {
            authorize_url = "https://auth.example.com/authorize",
            token_url = "https://auth.example.com/token",
            scopes = ["calendar.read"],
        },
    },
}

mod support;
mod tools;

mod abort;
mod artifacts;
mod knowledge;
mod model_access;
mod names;
mod oauth;
mod secrets;
mod state;
mod turn_identity;
