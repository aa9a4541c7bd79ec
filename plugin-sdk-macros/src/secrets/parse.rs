//! The struct and each field's `#[secret(label = ..., description = ...)]`, checked as
//! they are read: keys are field names, texts follow the LocalizedText rules.

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
    for arg in secret_args(&field.attrs, errors) {
        let key = arg.key.clone();
        match &*key.to_string() {
            LABEL => label.set(&key, arg.localized(errors), errors),
            DESCRIPTION => description.set(&key, arg.localized(errors), errors),
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
    })
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
