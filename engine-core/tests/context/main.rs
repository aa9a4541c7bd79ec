//! The tool context, rule by rule, through `Engine::call` with tools that take each
//! extractor: secrets and equipping, audit redaction, state, artifacts, knowledge on the
//! real SQLite store, model access through a provider double on a real socket, and the
//! turn's identity.

plugin_sdk::plugin! { namespace = "ctx", engine = ">=0.1" }

mod support;
mod tools;

mod abort;
mod artifacts;
mod knowledge;
mod model_access;
mod names;
mod secrets;
mod state;
mod turn_identity;
