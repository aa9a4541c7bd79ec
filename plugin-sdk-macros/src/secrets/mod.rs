//! `#[derive(Secrets)]`: a struct of `Secret` fields, one per key a tool declares.

mod expand;
mod parse;

use proc_macro2::TokenStream;

use crate::errors::Errors;

pub fn derive(input: TokenStream) -> TokenStream {
    let input: syn::DeriveInput = match syn::parse2(input) {
        Ok(input) => input,
        Err(error) => return error.into_compile_error(),
    };
    let mut errors = Errors::default();
    let bundle = parse::bundle(&input, &mut errors);
    // The impls are emitted beside errors too, so that the tools taking this struct
    // report nothing but the mistake made here.
    let impls = expand::bundle(&bundle);
    let errors = errors.into_compile_errors();
    quote::quote!(#impls #errors)
}
