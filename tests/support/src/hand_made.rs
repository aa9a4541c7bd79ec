//! Registrations written by hand, as a generator other than the SDK's macros could write
//! them: the engine's start-up check is what stands between them and a running engine.
//! The macros refuse the same mistakes at compile time (see `tests/ui`), so the refusal
//! fixtures that need an in-crate clash, a built-in's name or an overlong wire name
//! register these instead.

use plugin_sdk::engine::{CallInput, HookInput, HookResult};
use plugin_sdk::hook::{MessageReceived, PreModelOutcome, ResponseSent};
use plugin_sdk::ToolError;

/// The body of every hand-made tool: it answers `"ok"`.
pub fn answer(_: CallInput<'_>) -> Result<String, ToolError> {
    Ok("\"ok\"".to_owned())
}

/// The body of a hand-made `message_received` hook: it observes.
pub fn observe_message(_: HookInput<'_, MessageReceived>) -> HookResult<MessageReceived> {
    Ok(PreModelOutcome::Observe)
}

/// The body of a hand-made `response_sent` hook: it observes.
pub fn observe_sent(_: HookInput<'_, ResponseSent>) -> HookResult<ResponseSent> {
    Ok(())
}

/// Registers a plugin manifest `$manifest` with `$namespace`, for this package, or for
/// `package = "..."` at version 0.0.1, as another crate's registration would be.
#[macro_export]
macro_rules! hand_made_plugin {
    ($manifest:ident, $namespace:literal) => {
        $crate::hand_made_plugin!(
            $manifest,
            $namespace,
            ::core::env!("CARGO_PKG_NAME"),
            ::core::env!("CARGO_PKG_VERSION")
        );
    };
    ($manifest:ident, $namespace:literal, package = $package:literal) => {
        $crate::hand_made_plugin!($manifest, $namespace, $package, "0.0.1");
    };
    ($manifest:ident, $namespace:literal, $package:expr, $version:expr) => {
        static $manifest: $crate::sdk::engine::PluginManifest =
            $crate::sdk::engine::PluginManifest {
                namespace: $namespace,
                package: $package,
                version: $version,
                engine: ">=0.1",
                display_name: ::core::option::Option::None,
                description: ::core::option::Option::None,
                api_version: ::core::option::Option::None,
                state: ::core::option::Option::None,
                system: $crate::sdk::engine::System::NONE,
                catalogue: $crate::sdk::engine::Catalogue::NONE,
                oauth: &[],
            };
        $crate::sdk::__private::inventory::submit!($crate::sdk::__private::PluginEntry(&$manifest));
    };
}

/// Registers a tool `$name` of `$manifest` that takes no arguments and answers `"ok"`.
#[macro_export]
macro_rules! hand_made_tool {
    ($manifest:ident, $name:literal) => {
        $crate::sdk::__private::inventory::submit!($crate::sdk::engine::ToolDescriptor {
            name: $name,
            description: "A tool registered by hand.",
            summary: ::core::option::Option::None,
            category: ::core::option::Option::None,
            annotations: $crate::sdk::engine::ToolAnnotations {
                read_only: ::core::option::Option::None,
                destructive: ::core::option::Option::None,
                idempotent: ::core::option::Option::None,
                open_world: ::core::option::Option::None,
            },
            strict: true,
            exclusive: false,
            staged: ::core::option::Option::None,
            examples: &[],
            plugin: || &$manifest,
            input_schema: $crate::sdk::engine::schema::empty_object_schema,
            output_schema: $crate::sdk::engine::schema::empty_object_schema,
            entry: $crate::sdk::engine::ToolEntry::Ready($crate::hand_made::answer),
            secrets: &[],
            knowledge: ::core::option::Option::None,
            needs: $crate::sdk::engine::Needs::NOTHING,
            location: $crate::sdk::engine::SourceLocation {
                file: ::core::file!(),
                line: ::core::line!(),
            },
        });
    };
}

/// Registers a channel `$name` of `$manifest` whose adapter is `$adapter` (a unit struct
/// implementing `Channel`), as `#[define_channel]` would, without its compile-time checks.
#[macro_export]
macro_rules! hand_made_channel {
    ($manifest:path, $name:literal, $adapter:expr) => {
        $crate::sdk::__private::inventory::submit!($crate::sdk::channel::ChannelDescriptor {
            name: $name,
            description: "A channel registered by hand.",
            plugin: || &$manifest,
            adapter: &$adapter,
            location: $crate::sdk::engine::SourceLocation {
                file: ::core::file!(),
                line: ::core::line!(),
            },
        });
    };
}

/// Registers a hook `$name` of `$manifest` that observes, at `message_received` or at
/// `response_sent`.
#[macro_export]
macro_rules! hand_made_hook {
    ($manifest:ident, $name:literal, message_received) => {
        $crate::hand_made_hook!(@register $manifest, $name,
            MessageReceived($crate::sdk::engine::HookEntry::Ready($crate::hand_made::observe_message)));
    };
    ($manifest:ident, $name:literal, response_sent) => {
        $crate::hand_made_hook!(@register $manifest, $name,
            ResponseSent($crate::sdk::engine::HookEntry::Ready($crate::hand_made::observe_sent)));
    };
    (@register $manifest:ident, $name:literal, $handler:ident($entry:expr)) => {
        $crate::sdk::__private::inventory::submit!($crate::sdk::engine::HookDescriptor {
            name: $name,
            description: "A hook registered by hand.",
            summary: ::core::option::Option::None,
            position: 100,
            timeout: ::core::time::Duration::from_secs(1),
            mutates_response: false,
            fail_closed: ::core::option::Option::None,
            plugin: || &$manifest,
            handler: $crate::sdk::engine::HookHandler::$handler($entry),
            needs: $crate::sdk::engine::Needs::NOTHING,
            secrets: &[],
            location: $crate::sdk::engine::SourceLocation {
                file: ::core::file!(),
                line: ::core::line!(),
            },
        });
    };
}
