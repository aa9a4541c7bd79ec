//! The `key`, `key = value` argument lists shared by `#[define_tool(...)]`,
//! `#[define_hook(...)]`, `plugin! {...}` and `#[tool_args(...)]`, parsed into typed values
//! that keep their spans.

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{braced, bracketed, Ident, LitBool, LitInt, LitStr, Token};

use crate::errors::Errors;
use crate::localized::Localized;

/// One `key` or `key = value`.
pub struct Arg {
    pub key: Ident,
    pub value: Value,
}

/// What stands after `=`, or nothing.
pub enum Value {
    Flag,
    Str(LitStr),
    Bool(LitBool),
    Int(LitInt),
    Map(Localized),
    Path(syn::Path),
    /// The tokens of a braced block its key parses itself (`system = { ... }`, `oauth =
    /// { ... }`).
    Block(proc_macro2::TokenStream),
    /// A bracketed list of strings (`choices = ["eu", "us"]`).
    List(Vec<LitStr>),
}

impl Parse for Arg {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        // `crate` is a keyword: accept it as a key.
        let key = Ident::parse_any(input)?;
        if !input.peek(Token![=]) {
            return Ok(Self {
                key,
                value: Value::Flag,
            });
        }
        input.parse::<Token![=]>()?;
        let block = key == crate::symbol::SYSTEM || key == crate::symbol::OAUTH;
        let value = if block && input.peek(syn::token::Brace) {
            let content;
            braced!(content in input);
            Value::Block(content.parse()?)
        } else if input.peek(syn::token::Bracket) {
            let content;
            bracketed!(content in input);
            let items = Punctuated::<LitStr, Token![,]>::parse_terminated(&content)?;
            Value::List(items.into_iter().collect())
        } else if input.peek(syn::token::Brace) {
            let content;
            let brace = braced!(content in input);
            Value::Map(Localized::parse_map(brace.span.join(), &content)?)
        } else if input.peek(LitStr) {
            Value::Str(input.parse()?)
        } else if input.peek(LitBool) {
            Value::Bool(input.parse()?)
        } else if input.peek(LitInt) {
            Value::Int(input.parse()?)
        } else if key == crate::symbol::CRATE || key == crate::symbol::STATE {
            // The keys that name an item: `crate = ::sdk`, `state = Crm`.
            Value::Path(input.parse()?)
        } else {
            return Err(input.error(
                "expected a string literal, a number, `true`/`false`, a `[\"...\"]` list or a `{ \"tag\": \"text\" }` map",
            ));
        };
        Ok(Self { key, value })
    }
}

/// Parses a comma-separated list of arguments.
pub fn parse_args(input: ParseStream) -> syn::Result<Vec<Arg>> {
    Ok(Punctuated::<Arg, Token![,]>::parse_terminated(input)?
        .into_iter()
        .collect())
}

/// A setting that may be given once; the second occurrence is reported there.
pub struct Once<T>(Option<T>);

impl<T> Default for Once<T> {
    fn default() -> Self {
        Self(None)
    }
}

impl<T> Once<T> {
    /// Records `value`; `None` (a value already reported as malformed) is skipped.
    pub fn set(&mut self, key: &Ident, value: Option<T>, errors: &mut Errors) {
        let Some(value) = value else { return };
        if self.0.is_some() {
            errors.at(key.span(), format_args!("`{key}` is set multiple times"));
        } else {
            self.0 = Some(value);
        }
    }

    pub fn get(self) -> Option<T> {
        self.0
    }
}

impl Arg {
    /// The value as a string literal, or an error saying so.
    pub fn string(self, errors: &mut Errors) -> Option<LitStr> {
        match self.value {
            Value::Str(lit) => Some(lit),
            _ => self.expected("a string literal", errors),
        }
    }

    /// The value as LocalizedText: a string or a `{ "tag": "text" }` map.
    pub fn localized(self, errors: &mut Errors) -> Option<Localized> {
        match self.value {
            Value::Str(lit) => Some(Localized::Plain(lit)),
            Value::Map(map) => Some(map),
            _ => self.expected("a string or a `{ \"en-US\": \"...\" }` map", errors),
        }
    }

    /// A list of string literals: `choices = ["eu", "us"]`.
    pub fn strings(self, errors: &mut Errors) -> Option<Vec<LitStr>> {
        match self.value {
            Value::List(items) => Some(items),
            _ => self.expected("a list of strings: `[\"eu\", \"us\"]`", errors),
        }
    }

    /// A flag: `key` (true) or `key = true|false`.
    pub fn flag(self, errors: &mut Errors) -> Option<(bool, Span)> {
        match self.value {
            Value::Flag => Some((true, self.key.span())),
            Value::Bool(lit) => Some((lit.value, lit.span)),
            _ => self.expected("nothing or `true`/`false`", errors),
        }
    }

    /// A whole number in `range`: `position = 10`.
    pub fn int(
        self,
        range: std::ops::RangeInclusive<u64>,
        errors: &mut Errors,
    ) -> Option<(u64, Span)> {
        let what = format!("a whole number from {} to {}", range.start(), range.end());
        match &self.value {
            Value::Int(lit) => match lit.base10_parse::<u64>() {
                Ok(value) if range.contains(&value) => Some((value, lit.span())),
                _ => {
                    errors.at(lit.span(), format_args!("`{}` takes {what}", self.key));
                    None
                }
            },
            _ => self.expected(&what, errors),
        }
    }

    /// A braced block, as tokens: `system = { ... }`, `oauth = { ... }`.
    pub fn block(self, errors: &mut Errors) -> Option<proc_macro2::TokenStream> {
        let example = if self.key == crate::symbol::OAUTH {
            "a block: `{ google = { authorize_url = \"https://...\", token_url = \"https://...\", scopes = [\"...\"] } }`"
        } else {
            "a block: `{ debian = [...], env = { NAME = \"value\" } }`"
        };
        match self.value {
            Value::Block(tokens) => Some(tokens),
            _ => self.expected(example, errors),
        }
    }

    /// A path: `crate = ::renamed_sdk`, `state = Crm`.
    pub fn path(self, errors: &mut Errors) -> Option<syn::Path> {
        let example = if self.key == crate::symbol::STATE {
            "a type such as `Crm` (implementing `plugin_sdk::shared::PluginState`)"
        } else {
            "a path such as `::plugin_sdk`"
        };
        match self.value {
            Value::Path(path) => Some(path),
            _ => self.expected(example, errors),
        }
    }

    fn expected<T>(&self, what: &str, errors: &mut Errors) -> Option<T> {
        errors.at(self.key.span(), format_args!("`{}` takes {what}", self.key));
        None
    }

    /// Reports a key the item does not know, listing the ones it does.
    pub fn unknown(&self, known: &[&str], errors: &mut Errors) {
        errors.at(
            self.key.span(),
            format_args!(
                "unknown attribute `{}`; expected one of: {}",
                self.key,
                known.join(", ")
            ),
        );
    }
}

/// The path generated code uses to reach plugin-sdk: `crate = path`, else `::plugin_sdk`.
pub fn sdk_path(krate: Option<syn::Path>) -> syn::Path {
    krate.unwrap_or_else(|| syn::parse_quote!(::plugin_sdk))
}
