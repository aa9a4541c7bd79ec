//! The manifest as a static, its registration, and the crate-root trait through which
//! every tool and hook of the crate finds it.

use proc_macro2::TokenStream;
use quote::quote;

use super::parse::Manifest;
use crate::attr::sdk_path;
use crate::localized::expand_option;

pub fn manifest(manifest: &Manifest) -> TokenStream {
    let sdk = sdk_path(manifest.sdk.clone());
    let private = quote!(#sdk::__private);
    let namespace = &manifest.namespace;
    let engine = &manifest.engine;
    let display_name = expand_option(manifest.display_name.as_ref(), &sdk);
    let description = expand_option(manifest.description.as_ref(), &sdk);
    quote! {
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
            };

            /// The look-up a tool makes through `use crate::*` (see `__private`).
            pub(crate) trait Lookup {
                fn __plugin_sdk_plugin(&self) -> #private::Declared {
                    #private::Declared(&MANIFEST)
                }
            }

            impl Lookup for #private::PluginProbe {}

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

/// `fn __plugin() -> &'static PluginManifest`, for a tool or hook anywhere in the crate:
/// it finds the trait that `plugin!` defines at the crate root (see `__private`).
pub fn lookup(private: &TokenStream) -> TokenStream {
    quote! {
        fn __plugin() -> &'static #private::PluginManifest {
            #[allow(unused_imports)]
            use crate::*;
            #[allow(unused_imports)]
            use #private::NoPluginYet as _;
            #private::declared_plugin((&#private::PluginProbe).__plugin_sdk_plugin())
        }
    }
}
