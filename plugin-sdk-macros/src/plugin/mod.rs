//! `plugin! { ... }`: the crate's manifest, once, at the crate root.

mod expand;
mod parse;

pub use expand::lookup;

use proc_macro2::TokenStream;

use crate::errors::Errors;

pub fn plugin(input: TokenStream) -> TokenStream {
    let args = match syn::parse::Parser::parse2(crate::attr::parse_args, input) {
        Ok(args) => args,
        Err(error) => return error.into_compile_error(),
    };
    let mut errors = Errors::default();
    let manifest = parse::Manifest::from_args(args, &mut errors);
    match errors.finish() {
        Ok(()) => expand::manifest(&manifest),
        Err(error) => error.into_compile_error(),
    }
}
