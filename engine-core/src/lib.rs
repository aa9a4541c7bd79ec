//! The engine side of the SDK: what an engine image links, collected in one place.
//!
//! An engine image depends on `engine-core` and on the plugin crates it ships, names each
//! plugin crate once (`use acme_crm as _;`) so the linker keeps it, and builds a
//! [`Registry`] at start-up. Validation, catalogs and dispatch build on the registry.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod registry;

pub use registry::{PluginTools, Registry};
