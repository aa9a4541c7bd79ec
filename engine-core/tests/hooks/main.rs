//! The hook pipeline, rule by rule, with hooks registered by `#[define_hook]`. Each test
//! builds an engine from the hooks it names, so one test's hooks never run in another.

plugin_sdk::plugin! { namespace = "turns", engine = ">=0.1" }

// Linked so that the catalogs have tools in them, beside the hooks of `guard` and of this
// target (the namespaces `guard` and `turns` have hooks and no tools).
use acme_crm as _;
use guard as _;
use weather as _;

mod pre_model_hooks;
mod response_hooks;
mod support;

mod after_the_model;
mod before_the_model;
mod context;
mod failures;
mod hand_made;
mod linked;
mod per_agent;
