//! The example engine as a process: one test binary, so that its dozen areas link once.
//! Each module holds one area; every test starts the engine (`CARGO_BIN_EXE_engine`) and
//! the servers it needs of its own, so the tests run side by side.

mod actions;
mod attachments;
mod bounded_store;
mod cli;
mod config_check;
mod dev_mode;
mod drop_in_providers;
mod extensions;
mod files;
mod image;
mod knowledge;
mod mcp;
mod mcp_http_guard;
mod mcp_spend;
mod oauth;
mod panel;
mod plugins;
mod provider_errors;
mod replicas;
mod rojo_wire;
mod turn_setup;
mod turns;
