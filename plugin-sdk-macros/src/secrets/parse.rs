//! The struct and each field's `#[secret(label = ..., description = ..., type = ...)]`,
//! checked as they are read: keys are field names, texts follow the LocalizedText rules,
//! a `select` lists its choices.

use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, Type};

use crate::attr::{sdk_path, Arg, Once};
use crate::errors::Errors;
use crate::localized::Localized;
use crate::symbol::*;

pub struct Bundle<'a> {
    pub sdk: syn::Path,
    pub ident: &'a syn::Ident,
    pub generics: &'a syn::Generics,
    /// Named fields that are all read: the bundle can be built.
    pub complete: bool,
    pub keys: Vec<Key<'a>>,
}

pub struct Key<'a> {
    pub field: &'a syn::Ident,
    pub ty: &'a Type,
    pub label: Option<Localized>,
    pub description: Option<Localized>,
    pub kind: Kind,
}

/// How the person who configures the secret enters it.
pub enum Kind {
    /// Shown as typed.
    Text,
    /// Masked (the default).
    Password,
    /// One of a fixed list, stored and shown as written.
    Select(Vec<String>),
}

pub fn bundle<'a>(input: &'a DeriveInput, errors: &mut Errors) -> Bundle<'a> {
    let mut krate = Once::default();
    for arg in secret_args(&input.attrs, errors) {
        let key = arg.key.clone();
        match &*key.to_string() {
            CRATE => krate.set(&key, arg.path(errors), errors),
            _ => arg.unknown(SECRETS_STRUCT_KEYS, errors),
        }
    }
    if !input.generics.params.is_empty() {
        errors.at(
            input.generics.span(),
            "a secrets struct cannot be generic: its fields are `Secret`s",
        );
    }
    let mut complete = true;
    let fields = match &input.data {
        Data::Struct(data) => match &data.fields {
            Fields::Named(fields) => fields.named.iter().collect(),
            _ => {
                errors.at(input.ident.span(), "`#[derive(Secrets)]` needs named fields: each field's name is a key (`crm_api_key: Secret`)");
                complete = false;
                Vec::new()
            }
        },
        _ => {
            errors.at(
                input.ident.span(),
                "`#[derive(Secrets)]` goes on a struct whose fields are `Secret`s",
            );
            complete = false;
            Vec::new()
        }
    };
    let keys = fields
        .into_iter()
        .filter_map(|field| {
            let key = key(field, errors)?;
            if key.label.is_none() || key.description.is_none() {
                let ident = key.field;
                errors.at(ident.span(), format_args!("the secret `{ident}` needs a label and a description for the person who configures it: `#[secret(label = \"...\", description = \"...\")]`"));
            }
            Some(key)
        })
        .collect();
    Bundle {
        sdk: sdk_path(krate.get()),
        ident: &input.ident,
        generics: &input.generics,
        complete,
        keys,
    }
}

/// The key of a named field (`None` for a field without a name, already reported).
fn key<'a>(field: &'a syn::Field, errors: &mut Errors) -> Option<Key<'a>> {
    let mut label = Once::default();
    let mut description = Once::default();
    let mut kind = Once::default();
    let mut choices = Once::default();
    for arg in secret_args(&field.attrs, errors) {
        let key = arg.key.clone();
        match &*key.to_string() {
            LABEL => label.set(&key, arg.localized(errors), errors),
            DESCRIPTION => description.set(&key, arg.localized(errors), errors),
            TYPE => kind.set(&key, arg.string(errors), errors),
            CHOICES => choices.set(
                &key,
                arg.strings(errors).map(|list| (list, key.span())),
                errors,
            ),
            _ => arg.unknown(SECRET_FIELD_KEYS, errors),
        }
    }
    let (label, description) = (label.get(), description.get());
    for text in label.iter().chain(&description) {
        text.check(errors);
    }
    Some(Key {
        field: field.ident.as_ref()?,
        ty: &field.ty,
        label,
        description,
        kind: kind_of(kind.get(), choices.get(), errors),
    })
}

/// The field's kind from its `type` and `choices`: a `select` has choices, each once and
/// none empty, and only a `select` has them.
fn kind_of(
    kind: Option<syn::LitStr>,
    choices: Option<(Vec<syn::LitStr>, proc_macro2::Span)>,
    errors: &mut Errors,
) -> Kind {
    let named = kind.as_ref().map(syn::LitStr::value);
    match (named.as_deref(), choices) {
        (None | Some("password"), None) => Kind::Password,
        (Some("text"), None) => Kind::Text,
        (Some("select"), Some((list, span))) => {
            let mut values: Vec<String> = Vec::new();
            for choice in &list {
                let value = choice.value();
                if value.trim().is_empty() {
                    errors.at(
                        choice.span(),
                        "a choice is the value stored for the agent: write a non-empty one",
                    );
                } else if values.contains(&value) {
                    errors.at(
                        choice.span(),
                        format_args!("`{value}` is listed twice: list each choice once"),
                    );
                } else {
                    values.push(value);
                }
            }
            if list.is_empty() {
                errors.at(
                    span,
                    "a `select` secret offers at least one choice: `choices = [\"eu\", \"us\"]`",
                );
            }
            Kind::Select(values)
        }
        (Some("select"), None) => {
            errors.at(
                kind.as_ref()
                    .map_or_else(proc_macro2::Span::call_site, syn::LitStr::span),
                "a `select` secret lists what may be chosen: add `choices = [\"eu\", \"us\"]`",
            );
            Kind::Select(Vec::new())
        }
        (Some("text" | "password") | None, Some((_, span))) => {
            errors.at(
                span,
                "`choices` are for a `select` secret: add `type = \"select\"`, or remove `choices`",
            );
            Kind::Password
        }
        (Some(other), _) => {
            errors.at(kind.as_ref().map_or_else(proc_macro2::Span::call_site, syn::LitStr::span), format_args!("there is no secret type `{other}`: write `text` (shown as typed), `password` (masked, the default) or `select` (with `choices`)"));
            Kind::Password
        }
    }
}

/// The arguments of every `#[secret(...)]` on an item.
fn secret_args(attrs: &[syn::Attribute], errors: &mut Errors) -> Vec<Arg> {
    let mut args = Vec::new();
    for attr in attrs.iter().filter(|attr| attr.path().is_ident(SECRET)) {
        match attr.parse_args_with(crate::attr::parse_args) {
            Ok(parsed) => args.extend(parsed),
            Err(error) => errors.push(error),
        }
    }
    args
}
