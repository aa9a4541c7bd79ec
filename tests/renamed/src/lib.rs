//! `plugin-sdk` is `sdk` here: there is no `::plugin_sdk` for generated code to reach,
//! so this crate compiles only if every expansion follows `crate = ::sdk`.

use schemars::JsonSchema;
use sdk::hook::{MessageReceived, PreModelOutcome};
use sdk::{define_hook, define_tool, ToolArgs};
use serde::{Deserialize, Serialize};

sdk::plugin! { crate = ::sdk, namespace = "renamed", engine = ">=0.1" }

#[derive(Deserialize, JsonSchema, ToolArgs)]
#[tool_args(crate = ::sdk)]
pub struct Args {
    pub city: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Out {
    pub city: String,
}

/// Echo the city.
#[define_tool(crate = ::sdk, example = r#"{ "city": "Rome" }"#)]
pub async fn echo(args: Args) -> Out {
    Out { city: args.city }
}

/// Injects the message back as context.
#[define_hook(crate = ::sdk, event = "message_received")]
pub fn echo_context(event: &MessageReceived) -> PreModelOutcome {
    PreModelOutcome::InjectContext(event.message().to_owned())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_renamed_tool_is_registered_and_callable() {
        let tool = sdk::engine::linked_tools()
            .find(|tool| tool.id() == "renamed:echo")
            .expect("registered");
        let context = sdk::ToolContext::new();
        let output = futures::executor::block_on(
            tool.call(sdk::engine::CallInput::new(r#"{"city":"Rome"}"#, &context)),
        )
        .unwrap();
        assert_eq!(output, r#"{"city":"Rome"}"#);
    }

    #[test]
    fn the_renamed_hook_is_registered_and_runs() {
        let hook = sdk::engine::linked_hooks()
            .find(|hook| hook.id() == "renamed:echo_context")
            .expect("registered");
        let sdk::engine::HookHandler::MessageReceived(sdk::engine::HookEntry::Ready(run)) =
            hook.handler
        else {
            panic!("a ready message_received hook expected");
        };
        let payload = super::MessageReceived::new(sdk::hook::Turn::new("c"), "hi");
        let outcome = run(sdk::engine::HookInput::new(&payload));
        assert_eq!(
            outcome,
            Ok(super::PreModelOutcome::InjectContext("hi".into()))
        );
    }
}
