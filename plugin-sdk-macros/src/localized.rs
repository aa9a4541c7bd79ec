//! LocalizedText literals: parsed, checked against canonical BCP 47 tags, expanded sorted.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::parse::ParseStream;
use syn::punctuated::Punctuated;
use syn::{LitStr, Token};
use unic_langid::LanguageIdentifier;

use crate::errors::Errors;

/// `"text"` or `{ "en-US": "text", "it-IT": "testo" }`.
pub enum Localized {
    Plain(LitStr),
    Map {
        span: Span,
        entries: Vec<(LitStr, LitStr)>,
    },
}

struct Entry(LitStr, LitStr);

impl syn::parse::Parse for Entry {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let tag = input.parse()?;
        input.parse::<Token![:]>()?;
        Ok(Self(tag, input.parse()?))
    }
}

impl Localized {
    /// Parses the inside of a `{ ... }` map.
    pub fn parse_map(span: Span, content: ParseStream) -> syn::Result<Self> {
        let entries = Punctuated::<Entry, Token![,]>::parse_terminated(content)?;
        Ok(Self::Map {
            span,
            entries: entries
                .into_iter()
                .map(|Entry(tag, text)| (tag, text))
                .collect(),
        })
    }

    /// Checks every rule: non-empty text, a non-empty map, canonical and distinct tags.
    pub fn check(&self, errors: &mut Errors) {
        for text in self.texts() {
            check_text(text, errors);
        }
        self.check_tags(errors);
    }

    /// Checks the map's rules only: not empty, canonical and distinct tags (for texts
    /// that name something checked on its own, such as files).
    pub fn check_tags(&self, errors: &mut Errors) {
        let entries = match self {
            Self::Plain(_) => return,
            Self::Map { span, entries } if entries.is_empty() => {
                return errors.at(*span, "an empty map has no text: add at least `\"en-US\": \"...\"`, or write a plain string");
            }
            Self::Map { entries, .. } => entries,
        };
        let mut seen: Vec<String> = Vec::new();
        for (tag, _) in entries {
            let value = tag.value();
            match value.parse::<LanguageIdentifier>() {
                Err(_) => errors.at(
                    tag.span(),
                    format_args!("`{value}` is not a BCP 47 language tag: write a tag such as `en-US`, `it-IT` or `zh-Hant-TW`"),
                ),
                Ok(id) if id.to_string() != value => errors.at(
                    tag.span(),
                    format_args!("`{value}` is not a canonical BCP 47 tag: write `{id}`"),
                ),
                Ok(_) if seen.contains(&value) => {
                    errors.at(tag.span(), format_args!("the tag `{value}` is given twice"))
                }
                Ok(_) => seen.push(value),
            }
        }
    }

    /// `LocalizedText::Plain(..)` or `LocalizedText::Map(&[..])`, entries sorted by tag.
    pub fn expand(&self, sdk: &syn::Path) -> TokenStream {
        self.expand_with(sdk, |text| quote!(#text))
    }

    /// [`expand`](Self::expand), each text as `text` makes it of its literal (a file's
    /// content, for a text that names a file).
    pub fn expand_with(
        &self,
        sdk: &syn::Path,
        text: impl Fn(&LitStr) -> TokenStream,
    ) -> TokenStream {
        match self {
            Self::Plain(plain) => {
                let plain = text(plain);
                quote!(#sdk::__private::LocalizedText::Plain(#plain))
            }
            Self::Map { entries, .. } => {
                let mut sorted: Vec<_> = entries.iter().collect();
                sorted.sort_by_key(|(tag, _)| tag.value());
                let pairs = sorted.iter().map(|(tag, value)| {
                    let value = text(value);
                    quote!((#tag, #value))
                });
                quote!(#sdk::__private::LocalizedText::Map(&[#(#pairs),*]))
            }
        }
    }

    /// Its texts, one per tag.
    pub fn texts(&self) -> Vec<&LitStr> {
        match self {
            Self::Plain(text) => vec![text],
            Self::Map { entries, .. } => entries.iter().map(|(_, text)| text).collect(),
        }
    }
}

fn check_text(text: &LitStr, errors: &mut Errors) {
    if text.value().trim().is_empty() {
        errors.at(
            text.span(),
            "a LocalizedText cannot be empty: write the text, or leave the attribute out",
        );
    }
}

/// An optional LocalizedText as an `Option<LocalizedText>` expression.
pub fn expand_option(text: Option<&Localized>, sdk: &syn::Path) -> TokenStream {
    match text {
        Some(text) => {
            let text = text.expand(sdk);
            quote!(::core::option::Option::Some(#text))
        }
        None => quote!(::core::option::Option::None),
    }
}
