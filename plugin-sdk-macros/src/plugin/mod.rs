//! `plugin! { ... }`: the crate's manifest, once, at the crate root.

mod catalogue;
mod expand;
mod oauth;
mod parse;
mod system;

pub use expand::{crate_checks, Item};

use proc_macro2::TokenStream;

use crate::errors::Errors;

/// The manifest, also beside errors: the crate's tools and hooks then find a plugin,
/// and report nothing but the mistake made here.
pub fn plugin(input: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let manifest = match syn::parse::Parser::parse2(crate::attr::parse_args, input) {
        Ok(args) => parse::Manifest::from_args(args, &mut errors),
        Err(error) => {
            errors.push(error);
            parse::Manifest::default()
        }
    };
    // A mistake here is the one reported: the crate's actions then take an
    // `api_version` as declared.
    let manifest = expand::manifest(&manifest, errors.is_empty());
    let errors = errors.into_compile_errors();
    quote::quote!(#manifest #errors)
}
