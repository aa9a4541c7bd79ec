//! `#[define_channel]`: a unit struct that implements `Channel`, registered under a name
//! that becomes its path, `/channels/<name>`. Parse the attribute, check the struct,
//! expand the registration; on an error, the struct as written beside it.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::ItemStruct;

use crate::attr::{parse_args, sdk_path, Once};
use crate::doc::doc_comment;
use crate::errors::{fallback, Errors};
use crate::names;
use crate::symbol::{CHANNEL_KEYS, CRATE, NAME};

/// A checked channel, ready to expand.
struct ChannelItem<'a> {
    sdk: syn::Path,
    item: &'a ItemStruct,
    name: String,
    name_span: Span,
    description: String,
}

pub fn define_channel(attr: TokenStream, item: TokenStream) -> TokenStream {
    let item: ItemStruct = match syn::parse2(item.clone()) {
        Ok(item) => item,
        Err(_) => {
            let message = "`#[define_channel]` goes on a unit struct that implements `plugin_sdk::channel::Channel`: `struct Webhook;`";
            return fallback(item.clone(), syn::Error::new_spanned(&item, message));
        }
    };
    let args = match syn::parse::Parser::parse2(parse_args, attr) {
        Ok(args) => args,
        Err(error) => return fallback(item.into_token_stream(), error),
    };
    let mut errors = Errors::default();
    let checked = check(args, &item, &mut errors);
    match errors.finish() {
        Ok(()) => expand(&checked),
        Err(error) => fallback(item.to_token_stream(), error),
    }
}

fn check<'a>(
    args: Vec<crate::attr::Arg>,
    item: &'a ItemStruct,
    errors: &mut Errors,
) -> ChannelItem<'a> {
    let mut name = Once::default();
    let mut krate = Once::default();
    for arg in args {
        let key = arg.key.clone();
        match &*key.to_string() {
            NAME => name.set(&key, arg.string(errors), errors),
            CRATE => krate.set(&key, arg.path(errors), errors),
            _ => arg.unknown(CHANNEL_KEYS, errors),
        }
    }
    if !matches!(item.fields, syn::Fields::Unit) {
        errors.at(
            item.fields.span(),
            "a channel is a unit struct (`struct Webhook;`): the engine holds one for the whole process; read what differs per request from the request",
        );
    }
    if !item.generics.params.is_empty() {
        errors.at(
            item.generics.span(),
            "a channel cannot be generic: name a concrete unit struct",
        );
    }
    let (name, name_span) = match name.get() {
        Some(lit) => (lit.value(), lit.span()),
        None => (kebab_case(&item.ident.to_string()), item.ident.span()),
    };
    if let Err(message) = names::check_channel_name(&name) {
        errors.at(name_span, message);
    }
    let description = doc_comment(&item.attrs).unwrap_or_else(|| {
        errors.at(item.ident.span(), "a channel needs a doc comment: it says what the channel is for; add `/// What the channel connects, in English.` above the struct");
        String::new()
    });
    ChannelItem {
        sdk: sdk_path(krate.get()),
        item,
        name,
        name_span,
        description,
    }
}

fn expand(channel: &ChannelItem) -> TokenStream {
    let ChannelItem {
        sdk,
        item,
        name,
        name_span,
        description,
    } = channel;
    let private = quote!(#sdk::__private);
    let ident = &item.ident;
    let plugin_lookup = crate::plugin::crate_checks(
        &private,
        "RenameOneOfTheChannelsOfThisCrateThatShareThisName",
        name,
        *name_span,
        crate::plugin::Item::Channel,
    );
    // Spanned at the struct's name: a struct without `impl Channel` is reported there.
    let adapter = quote_spanned!(ident.span()=> &#ident as &'static dyn #private::Channel);
    quote! {
        #item

        const _: () = {
            #plugin_lookup

            #private::inventory::submit! {
                #private::ChannelDescriptor {
                    name: #name,
                    description: #description,
                    plugin: __plugin,
                    adapter: #adapter,
                    location: #private::SourceLocation { file: ::core::file!(), line: ::core::line!() },
                }
            }
        };
    }
}

/// `SlackEvents` → `slack-events`: the default name, as a path segment.
fn kebab_case(ident: &str) -> String {
    let mut name = String::new();
    for (i, c) in ident.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            name.push('-');
        }
        name.push(c.to_ascii_lowercase());
    }
    name
}
