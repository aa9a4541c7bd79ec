//! Generated code uses absolute paths: the author's own `Result`, `Option`, `Box`,
//! `Some`, `Ok` and `core` do not disturb it, in tools and in hooks.
#![allow(dead_code)]

use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "hostile", engine = ">=0.1" }

struct Result;
struct Option;
struct Box;
struct Some;
struct Ok;
mod core {}
mod std {}

#[derive(Deserialize, JsonSchema, ToolArgs)]
struct Args {
    city: ::std::string::String,
}

#[derive(Serialize, JsonSchema)]
struct Out {
    city: ::std::string::String,
}

/// Echo the city.
#[define_tool]
async fn echo(args: Args) -> ::core::result::Result<Out, ToolError> {
    ::core::result::Result::Ok(Out { city: args.city })
}

/// Observes every reply, through an `async fn` that awaits.
#[define_hook(event = "response_generated")]
async fn observe(event: &ResponseGenerated) -> ::core::result::Result<(), ::std::string::String> {
    let _ = event;
    ::std::future::ready(()).await;
    ::core::result::Result::Ok(())
}

/// Injects context from a plain function.
#[define_hook(event = "message_received")]
fn inject(event: &MessageReceived) -> PreModelOutcome {
    PreModelOutcome::InjectContext(event.message().into())
}

fn main() {}

/// A test target of its own (tests/Cargo.toml): that it compiled is the check, and `main`
/// asserts what it links.
#[test]
fn compiles_and_runs() {
    main();
}
