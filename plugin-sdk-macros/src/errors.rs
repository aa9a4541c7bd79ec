//! Accumulating errors, so that an author sees every mistake of an item at once.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use std::fmt::Display;

/// The errors found so far; `finish` turns them into one combined `syn::Error`.
#[derive(Default)]
pub struct Errors(Option<syn::Error>);

impl Errors {
    /// Records `message` at `span`.
    pub fn at(&mut self, span: Span, message: impl Display) {
        self.push(syn::Error::new(span, message));
    }

    /// Records an error already built.
    pub fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(error),
            None => self.0 = Some(error),
        }
    }

    /// `Ok` when nothing was recorded.
    pub fn finish(self) -> syn::Result<()> {
        self.0.map_or(Ok(()), Err)
    }
}

/// The author's item as written, beside the errors: one mistake gives one error, and
/// code that calls the function keeps compiling.
pub fn fallback(item: TokenStream, error: syn::Error) -> TokenStream {
    let error = error.into_compile_error();
    quote!(#item #error)
}
