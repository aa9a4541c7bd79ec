//! `#[derive(ToolArgs)]`: strict mode for a type, checked at compile time.

mod check;
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
    let parsed = parse::Input::from_ast(&input, &mut errors);
    check::rules(&parsed, &mut errors);
    // An action's arguments are strict: `strict = false` beside `action` is reported, and
    // the impls are those of strict arguments, so that no use adds a follow-on error.
    let parsed = parse::Input {
        strict: parsed.strict || parsed.action.is_some(),
        ..parsed
    };
    // The impls are emitted even beside errors, so that uses of the type do not add
    // follow-on errors to the one that names the mistake.
    let impls = expand::impls(&parsed);
    let errors = errors.finish().err().map(syn::Error::into_compile_error);
    quote::quote!(#impls #errors)
}
