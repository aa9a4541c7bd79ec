//! `#[define_tool]`: parse the attribute, check the function, expand the registration.

mod check;
mod expand;
mod parse;

use proc_macro2::TokenStream;
use quote::quote;

use crate::errors::{fallback, Errors};

pub fn define_tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    let function: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(function) => function,
        Err(_) => {
            let error = syn::Error::new_spanned(&item, "`#[define_tool]` goes on an `async fn`");
            return fallback(item, error);
        }
    };
    let mut errors = Errors::default();
    let attrs = match syn::parse::Parser::parse2(crate::attr::parse_args, attr) {
        Ok(args) => parse::ToolAttrs::from_args(args, &mut errors),
        Err(error) => return fallback(quote!(#function), error),
    };
    let tool = check::tool(attrs, &function, &mut errors);
    match errors.finish() {
        Ok(()) => expand::tool(&tool),
        Err(error) => fallback(quote!(#function), error),
    }
}
