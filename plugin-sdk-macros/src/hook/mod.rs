//! `#[define_hook]`: parse the attribute, check the function, expand the registration.

mod check;
mod event;
mod expand;
mod parse;

use proc_macro2::TokenStream;
use quote::quote;

use crate::errors::{fallback, Errors};

pub fn define_hook(attr: TokenStream, item: TokenStream) -> TokenStream {
    let function: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(function) => function,
        Err(_) => {
            let error = syn::Error::new_spanned(&item, "`#[define_hook]` goes on a function");
            return fallback(item, error);
        }
    };
    let mut errors = Errors::default();
    let attrs = match syn::parse::Parser::parse2(crate::attr::parse_args, attr) {
        Ok(args) => parse::HookAttrs::from_args(args, &mut errors),
        Err(error) => return fallback(quote!(#function), error),
    };
    let hook = check::hook(attrs, &function, &mut errors);
    match (hook, errors.finish()) {
        (Some(hook), Ok(())) => expand::hook(&hook),
        (_, Err(error)) => fallback(quote!(#function), error),
        (None, Ok(())) => unreachable!("a hook without an event has an error recorded"),
    }
}
