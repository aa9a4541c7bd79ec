//! Procedural macros of `plugin-sdk`. Depend on `plugin-sdk`, which re-exports them and
//! everything their expansions need; this crate is an implementation detail.
//!
//! Each macro reads as parse → check → expand: the input becomes typed values that keep
//! their spans, every rule is checked with errors accumulated, and only then is code
//! generated. On an error the author's item is emitted unchanged beside it.
#![forbid(unsafe_code)]

mod attr;
mod channel;
mod doc;
mod errors;
mod function;
mod hook;
mod localized;
mod names;
mod plugin;
mod secrets;
mod suspend;
mod symbol;
mod tool;
mod tool_args;

use proc_macro::TokenStream;

// `#[define_tool]`. The user docs are on plugin-sdk's re-exports, where rustdoc shows them
// and their examples can use `plugin_sdk`: these comments are not doc comments, so that
// rustdoc appends nothing to them.
#[proc_macro_attribute]
pub fn define_tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    tool::define_tool(attr.into(), item.into()).into()
}

// `#[define_action]`.
#[proc_macro_attribute]
pub fn define_action(attr: TokenStream, item: TokenStream) -> TokenStream {
    tool::define_action(attr.into(), item.into()).into()
}

// `#[define_channel]`.
#[proc_macro_attribute]
pub fn define_channel(attr: TokenStream, item: TokenStream) -> TokenStream {
    channel::define_channel(attr.into(), item.into()).into()
}

// `#[define_hook]`.
#[proc_macro_attribute]
pub fn define_hook(attr: TokenStream, item: TokenStream) -> TokenStream {
    hook::define_hook(attr.into(), item.into()).into()
}

// `plugin! { ... }`.
#[proc_macro]
pub fn plugin(input: TokenStream) -> TokenStream {
    plugin::plugin(input.into()).into()
}

// `#[derive(ToolArgs)]`.
#[proc_macro_derive(ToolArgs, attributes(tool_args))]
pub fn derive_tool_args(input: TokenStream) -> TokenStream {
    tool_args::derive(input.into()).into()
}

// `#[derive(Secrets)]`.
#[proc_macro_derive(Secrets, attributes(secret))]
pub fn derive_secrets(input: TokenStream) -> TokenStream {
    secrets::derive(input.into()).into()
}
