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
    match errors.finish() {
        Ok(()) => expand::impls(&parsed),
        // A derive cannot change the item, so the fallback is the errors alone: no impl
        // means no follow-on error beyond uses of the type as tool arguments.
        Err(error) => error.into_compile_error(),
    }
}
