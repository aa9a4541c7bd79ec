//! The manifest as a static, its registration, and the crate-root trait through which
//! every tool and hook of the crate finds it.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::parse::Manifest;
use crate::attr::sdk_path;
use crate::localized::expand_option;

/// The manifest's expansion; `checked` is false when `plugin!` itself has an error.
pub fn manifest(manifest: &Manifest, checked: bool) -> TokenStream {
    let sdk = sdk_path(manifest.sdk.clone());
    let private = quote!(#sdk::__private);
    let namespace = &manifest.namespace;
    let engine = &manifest.engine;
    let display_name = expand_option(manifest.display_name.as_ref(), &sdk);
    let description = expand_option(manifest.description.as_ref(), &sdk);
    let declares_api_version = manifest.api_version.is_some() || !checked;
    let api_version = match manifest.api_version {
        Some(version) => quote!(::core::option::Option::Some(#version)),
        None => quote!(::core::option::Option::None),
    };
    // The state's builder is named where its path resolves: beside `plugin!`, not in the
    // module below (a scope deeper, where `super` would skip a function body around
    // `plugin!`). Spanned at the type, so that one that is not a `PluginState` is
    // reported there.
    let (state, declared_state) = match &manifest.state {
        Some(ty) => (
            quote!(::core::option::Option::Some(<Names as #private::DeclaredState>::STATE)),
            quote_spanned!(ty.span()=>
                impl #private::DeclaredState for __plugin_sdk_plugin::Names {
                    const STATE: &'static #private::StateBuilder =
                        &const { #private::StateBuilder::of::<#ty>() };
                }
            ),
        ),
        None => (quote!(::core::option::Option::None), quote!()),
    };
    let debian = &manifest.system.debian;
    let env = manifest.system.env.iter().map(|(name, value)| {
        let name = name.to_string();
        quote!((#name, #value))
    });
    let system = quote!(#private::System { debian: &[#(#debian),*], env: &[#(#env),*] });
    let catalogue = manifest.catalogue.expand(&sdk);
    let oauth = manifest.oauth.expand(&private);
    quote! {
        #declared_state

        // A second `plugin!` in the crate defines this module again: one error, there.
        #[doc(hidden)]
        mod __plugin_sdk_plugin {
            pub(crate) static MANIFEST: #private::PluginManifest = #private::PluginManifest {
                namespace: #namespace,
                package: ::core::env!("CARGO_PKG_NAME"),
                version: ::core::env!("CARGO_PKG_VERSION"),
                engine: #engine,
                display_name: #display_name,
                description: #description,
                api_version: #api_version,
                state: #state,
                system: #system,
                catalogue: #catalogue,
                oauth: #oauth,
            };

            /// The look-up a tool makes through `use crate::*` (see `__private`).
            pub(crate) trait Lookup {
                fn __plugin_sdk_plugin(&self) -> #private::Declared {
                    #private::Declared(&MANIFEST)
                }
            }

            impl Lookup for #private::PluginProbe {}

            /// What tools and hooks check their names against (see `__private`).
            pub(crate) struct Names;

            impl #private::PluginNames for Names {
                const NAMESPACE: &'static str = #namespace;
                const DECLARES_API_VERSION: bool = #declares_api_version;
            }

            #private::inventory::submit! { #private::PluginEntry(&MANIFEST) }
        }

        #[doc(hidden)]
        use __plugin_sdk_plugin::Lookup as _;

        const _: () = ::core::assert!(
            #private::is_crate_root(::core::module_path!()),
            "`plugin!` belongs at the crate root (src/lib.rs), once per crate"
        );
    }
}

/// The kind of item whose `crate_checks` are made.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Item {
    Tool,
    Action,
    Hook,
    Channel,
}

/// What every tool, action, hook and channel of the crate emits: `fn __plugin() ->
/// &'static PluginManifest`, which finds the trait that `plugin!` defines at the crate
/// root (see `__private`), and the checks of its name against the crate's other items
/// (`clash`, the trait a second item of that name implements again), of its namespace
/// (for a tool or an action, the wire name's length) and, for an action or a channel,
/// that `plugin!` declares the API version they are written against.
pub fn crate_checks(
    private: &TokenStream,
    clash: &str,
    name: &str,
    name_span: Span,
    item: Item,
) -> TokenStream {
    let is_tool = matches!(item, Item::Tool | Item::Action);
    let clash = Ident::new(clash, name_span);
    let hash = crate::names::name_hash(name);
    let names = quote_spanned!(name_span=> __plugin_sdk_plugin::Names);
    // Spanned at the name, so that a second item of that name is reported there.
    let clash_impl = quote_spanned!(name_span=> impl #private::#clash<#hash> for #names {});
    let wire_check = is_tool.then(|| {
        let len = name.len();
        let message = format!(
            "the wire name `<namespace>__{name}` is longer than the {} characters that OpenAI, Anthropic, Mistral and Gemini accept: shorten the tool name (`#[define_tool(name = \"...\")]`) or the plugin's namespace",
            64
        );
        quote_spanned!(name_span=>
            const _: () = if !#private::wire_name_fits::<#names>(#len) {
                ::core::panic!(#message)
            };
        )
    });
    let api_version_check = matches!(item, Item::Action | Item::Channel).then(|| {
        let noun = if item == Item::Action { "an action" } else { "a channel" };
        // The version this SDK writes (plugin-sdk's `action::API_VERSIONS`).
        let message = format!(
            "{noun} is part of the action and channel API, whose version the plugin declares: add `api_version = 0` to the crate's `plugin!`"
        );
        quote_spanned!(name_span=>
            const _: () = if !<#names as #private::PluginNames>::DECLARES_API_VERSION {
                ::core::panic!(#message)
            };
        )
    });
    quote! {
        fn __plugin() -> &'static #private::PluginManifest {
            #[allow(unused_imports)]
            use crate::*;
            #[allow(unused_imports)]
            use #private::NoPluginYet as _;
            #private::declared_plugin((&#private::PluginProbe).__plugin_sdk_plugin())
        }

        // Without `plugin!`, these stand in for the crate root's (which `use crate::*`
        // finds first), so that only the missing `plugin!` is reported.
        #[allow(dead_code)]
        mod __plugin_sdk_plugin {
            pub struct Names;
            impl #private::PluginNames for Names {
                const NAMESPACE: &'static str = "";
                const DECLARES_API_VERSION: bool = true;
            }
        }
        const _: () = {
            #[allow(unused_imports)]
            use crate::*;
            #clash_impl
            #wire_check
            #api_version_check
        };
    }
}
