//! Accumulating errors, so that an author sees every mistake of an item at once.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use std::fmt::Display;

/// The errors found so far; `finish` turns them into one combined `syn::Error`.
///
/// Like serde_derive's `Ctxt`, it must be finished before it is dropped: a macro that
/// forgot to would drop the author's errors silently. Dropping it unfinished is a bug in
/// these macros, never a mistake of the author, so it panics.
#[derive(Default)]
pub struct Errors {
    errors: Option<syn::Error>,
    finished: bool,
}

impl Errors {
    /// Records `message` at `span`.
    pub fn at(&mut self, span: Span, message: impl Display) {
        self.push(syn::Error::new(span, message));
    }

    /// Records an error already built.
    pub fn push(&mut self, error: syn::Error) {
        match &mut self.errors {
            Some(all) => all.combine(error),
            None => self.errors = Some(error),
        }
    }

    /// Whether nothing has been recorded yet.
    pub fn is_empty(&self) -> bool {
        self.errors.is_none()
    }

    /// `Ok` when nothing was recorded.
    pub fn finish(mut self) -> syn::Result<()> {
        self.finished = true;
        self.errors.take().map_or(Ok(()), Err)
    }

    /// The recorded errors as `compile_error!`s (empty when there are none), to emit
    /// beside a fallback expansion.
    pub fn into_compile_errors(self) -> TokenStream {
        match self.finish() {
            Ok(()) => TokenStream::new(),
            Err(error) => error.into_compile_error(),
        }
    }
}

impl Drop for Errors {
    fn drop(&mut self) {
        if !self.finished && !std::thread::panicking() {
            panic!("plugin-sdk-macros bug: `Errors` dropped without `finish`");
        }
    }
}

/// The author's item as written, beside the errors: one mistake gives one error, and
/// code that calls the function keeps compiling.
pub fn fallback(item: TokenStream, error: syn::Error) -> TokenStream {
    let error = error.into_compile_error();
    quote!(#item #error)
}

/// `tokens` with every token, nested ones included, at `span`.
pub fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut token| {
            if let proc_macro2::TokenTree::Group(group) = &token {
                let mut inner =
                    proc_macro2::Group::new(group.delimiter(), respan(group.stream(), span));
                inner.set_span(span);
                token = proc_macro2::TokenTree::Group(inner);
            } else {
                token.set_span(span);
            }
            token
        })
        .collect()
}
