//! Hooks as linked: never in a tool catalog, and run as a ready entry or a future as
//! their body decides.

use engine_core::{Engine, Format};
use plugin_sdk::engine::{HookEntry, HookHandler};
use plugin_sdk::hook::Event;
#[test]
fn hooks_never_appear_in_a_tool_catalog() {
    let engine = Engine::builder().build().unwrap();
    let hook_namespaces: Vec<&str> = Event::ALL
        .into_iter()
        .flat_map(|event| engine.hooks(event))
        .map(|hook| hook.plugin().namespace)
        .collect();
    assert!(hook_namespaces.contains(&"guard") && hook_namespaces.contains(&"turns"));
    for format in Format::ALL {
        let catalog = engine.catalog(format, "en-US");
        let catalog = String::from_utf8_lossy(&catalog);
        assert!(catalog.contains("weather__weather"), "{catalog}");
        for namespace in ["guard", "turns"] {
            assert!(
                !catalog.contains(&format!("{namespace}__"))
                    && !catalog.contains(&format!("{namespace}:")),
                "a `{namespace}` hook is in the {format} catalog"
            );
        }
    }
}

#[test]
fn a_body_without_await_runs_as_a_ready_entry_and_one_that_awaits_as_a_future() {
    let entry = |name: &str| {
        let hook = plugin_sdk::engine::linked_hooks()
            .find(|hook| hook.name == name)
            .unwrap();
        match hook.handler {
            HookHandler::ResponseSent(HookEntry::Ready(_))
            | HookHandler::MessageReceived(HookEntry::Ready(_)) => "ready",
            HookHandler::ResponseSent(HookEntry::Async(_))
            | HookHandler::MessageReceived(HookEntry::Async(_)) => "async",
            _ => unreachable!("only message_received and response_sent hooks are asked for"),
        }
    };
    assert_eq!(
        entry("record_sent"),
        "ready",
        "an `async fn` without `.await`"
    );
    assert_eq!(entry("inject_a"), "ready", "a plain `fn`");
    assert_eq!(entry("inject_b"), "async", "an `async fn` with `.await`");
}
