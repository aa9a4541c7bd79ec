//! The struct and each field's `#[secret(label = ..., description = ...)]`, checked as
//! they are read: keys are field names, texts follow the LocalizedText rules.

use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, Type};

use crate::attr::{sdk_path, Arg, Once};
use crate::errors::Errors;
use crate::localized::Localized;

const STRUCT_KEYS: &[&str] = &["crate"];
const FIELD_KEYS: &[&str] = &["label", "description"];

pub struct Bundle<'a> {
    pub sdk: syn::Path,
    pub ident: &'a syn::Ident,
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
        match key.to_string().as_str() {
            "crate" => krate.set(&key, arg.path(errors), errors),
            _ => arg.unknown(STRUCT_KEYS, errors),
        }
    }
    if !input.generics.params.is_empty() {
        errors.at(
            input.generics.span(),
            "a secrets struct cannot be generic: its fields are `Secret`s",
        );
    }
    let fields = match &input.data {
        Data::Struct(data) => match &data.fields {
            Fields::Named(fields) => fields.named.iter().collect(),
            _ => {
                errors.at(input.ident.span(), "`#[derive(Secrets)]` needs named fields: each field's name is a key (`crm_api_key: Secret`)");
                Vec::new()
            }
        },
        _ => {
            errors.at(
                input.ident.span(),
                "`#[derive(Secrets)]` goes on a struct whose fields are `Secret`s",
            );
            Vec::new()
        }
    };
    let keys = fields
        .into_iter()
        .map(|field| {
            let ident = field.ident.as_ref().expect("named fields have names");
            let key = key(field, errors);
            if key.label.is_none() || key.description.is_none() {
                errors.at(ident.span(), format_args!("the secret `{ident}` needs a label and a description for the person who configures it: `#[secret(label = \"...\", description = \"...\")]`"));
            }
            key
        })
        .collect();
    Bundle {
        sdk: sdk_path(krate.get()),
        ident: &input.ident,
        keys,
    }
}

fn key<'a>(field: &'a syn::Field, errors: &mut Errors) -> Key<'a> {
    let mut label = Once::default();
    let mut description = Once::default();
    for arg in secret_args(&field.attrs, errors) {
        let key = arg.key.clone();
        match key.to_string().as_str() {
            "label" => label.set(&key, arg.localized(errors), errors),
            "description" => description.set(&key, arg.localized(errors), errors),
            _ => arg.unknown(FIELD_KEYS, errors),
        }
    }
    let (label, description) = (label.get(), description.get());
    for text in label.iter().chain(&description) {
        text.check(errors);
    }
    Key {
        field: field.ident.as_ref().expect("named fields have names"),
        ty: &field.ty,
        label,
        description,
    }
}

/// The arguments of every `#[secret(...)]` on an item.
fn secret_args(attrs: &[syn::Attribute], errors: &mut Errors) -> Vec<Arg> {
    let mut args = Vec::new();
    for attr in attrs.iter().filter(|attr| attr.path().is_ident("secret")) {
        match attr.parse_args_with(crate::attr::parse_args) {
            Ok(parsed) => args.extend(parsed),
            Err(error) => errors.push(error),
        }
    }
    args
}
