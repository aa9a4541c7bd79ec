//! Dev mode: a plugin's tools, running on the author's machine, inside a running engine.
//!
//! Trying a change to a tool in a real agent would otherwise mean rebuilding and
//! redeploying the engine's image. Instead, a plugin crate adds a small dev binary (an
//! example, so that the plugin's own build never pulls this crate in) that links the
//! plugin and calls [`serve`]:
//!
//! ```no_run
//! // examples/dev.rs of a plugin crate, with `plugin-dev` in its [dev-dependencies]
//! // and `use my_plugin as _;` so that its tools are linked.
//! #[tokio::main]
//! async fn main() -> Result<(), plugin_dev::DevError> {
//!     plugin_dev::serve(plugin_dev::DevOptions::from_env()?).await
//! }
//! ```
//!
//! It connects to `engine serve` over a WebSocket with a dev token for one agent
//! (`engine dev-token issue --agent <agent>`), and serves every tool, staged action and
//! hook the binary links: while it is connected, the agent equips them in every catalog
//! (a tool with the id of a linked one replaces it for that agent), stages and performs
//! its actions through it, and calls its tools with the engine's real context: the
//! secrets the tool declares, the conversation's state (its writes kept only when the
//! call succeeds), audit records the engine writes, the agent's knowledge base at its
//! grant, model calls through the engine's gateway and spend caps, and the
//! conversation's artifacts. The engine's deadline and cancellation are the call's abort
//! signal. The code never leaves the author's machine.
//!
//! [`serve`] prints nothing: what happens goes to [`DevOptions::on_event`] and to
//! `tracing`. It reconnects with backoff after a dropped connection, unless told not to.
//! With [`DevOptions::watch`] (`--watch`: [`Watch::from_args`]), a supervisor rebuilds
//! the dev binary on a source change and swaps the session's tools and hooks without
//! dropping the session. The protocol is in [`wire`].
#![forbid(unsafe_code)]
#![warn(missing_docs)]

/// Dev mode for the people who use it: the loop, a plugin's dev binary, what the engine
/// checks and gives, the limits, the protocol.
#[doc = include_str!("../docs/dev-mode.md")]
pub mod guide {}

/// The protocol, which the engine speaks too (the `plugin-dev-wire` crate).
pub use plugin_dev_wire as wire;

mod serve;

pub use serve::{serve, DevError, DevEvent, DevOptions, Watch};

/// The watch loop of the dev binary this is written in: rebuild it with cargo when its
/// package's `src/` or `examples/` change ([`Watch::cargo`]).
#[macro_export]
macro_rules! this_example {
    () => {
        $crate::Watch::cargo(
            env!("CARGO_MANIFEST_DIR"),
            env!("CARGO_PKG_NAME"),
            env!("CARGO_BIN_NAME"),
        )
    };
}
